"""Decisions last: another process, another day and a teammate on the batch's journal see them all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import imagekit

ROOT = Path(__file__).resolve().parents[2]

OTHER_DESK = textwrap.dedent("""
    import json, sys
    import imagekit
    url, key, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    with imagekit.Client(url, key, ledger=False) as client:
        desk = imagekit.review([client.image(i) for i in ids])
        seen = desk.decisions()
        desk.rate(ids[2], 5)
        desk.select(ids[3])
        desk.vote(ids[3], ids[0])
        print(json.dumps({"ratings": seen["rating"].fillna(0).astype(int).tolist(), "selected": [i.id for i in desk.selected],
                          "notes": seen["note"].fillna("").tolist(), "wins": seen["wins"].tolist()}))
""")


def other_process(client: imagekit.Client, ids: list[int]) -> dict:
    """What a desk on ``ids`` in another process saw (it then rates, selects and votes itself)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", OTHER_DESK, client.config.base_url, client.config.api_key,
                           json.dumps(ids)], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_another_process_sees_every_decision_and_adds_its_own(four):
    ids = [image.id for image in four]
    desk = imagekit.review(four)
    desk.rate(four[0], 4)
    desk.rate(four[1], 1)
    desk.rate(four[1], 2)
    desk.select(four[1])
    desk.vote(four[0], four[1])
    desk.note(four[2], "crop it")
    desk.select(four[0])
    desk.undo()  # not the last select: never made, for every desk
    seen = other_process(four[0].client, ids)
    assert seen == {"ratings": [4, 2, 0, 0], "selected": [ids[1], ids[3]], "notes": ["", "", "crop it", ""],
                    "wins": [1, 0, 0, 0]}
    frame = desk.decisions().set_index("image_id")  # and this desk sees what the other did
    assert frame["rating"].fillna(0).tolist() == [4, 2, 5, 0]
    assert [image.id for image in desk.selected] == [ids[1], ids[3]]
    assert frame["wins"].tolist() == [1, 0, 0, 1] and frame["losses"].tolist() == [1, 1, 0, 0]
    again = imagekit.review(list(reversed(four)))  # a new desk, another day: the same decisions
    pd.testing.assert_frame_equal(again.decisions().set_index("image_id").loc[ids], frame)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def journal(request, tmp_path) -> str:
    """A batch journal: a SQLite file, or a database of the run's PostgreSQL cluster (a team's)."""
    if request.param == "sqlite":
        return str(tmp_path / "journal.sqlite")
    return request.getfixturevalue("postgres").new_database()


def test_a_batch_desk_keeps_decisions_in_the_journal_for_the_team(ik, journal, tmp_path, monkeypatch):
    rows = ["a red kite", "a blue kite"]
    batch = ik.batch(rows, name="kites", style=ik.styles()[0], count=2).run(journal=journal, progress=False)
    images = batch.to_pandas()["image_id"].tolist()
    imagekit.review([ik.image(images[3])]).rate(images[3], 3)  # on a plain handle first: this machine's store only
    desk = imagekit.review(batch)
    assert desk.decisions()["image_id"].tolist() == images
    assert desk.decisions()["prompt"].tolist() == [rows[0]] * 2 + [rows[1]] * 2
    desk.rate(images[0], 5)
    desk.select(images[1])
    desk.vote(images[0], images[1])
    # A teammate: another machine (another home), the same journal and service.
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path / "teammate"))
    theirs = ik.batch(rows, name="kites", style=ik.styles()[0], count=2).run(journal=journal, progress=False)
    assert theirs.changed == 0  # nothing was made again
    team = imagekit.review(theirs)
    frame = team.decisions()
    assert frame["rating"].fillna(0).tolist() == [5, 0, 0, 3]
    assert [image.id for image in team.selected] == [images[1]] and frame["wins"].tolist() == [1, 0, 0, 0]
    team.note(images[2], "second best")
    assert desk.decisions()["note"].fillna("").tolist() == ["", "", "second best", ""]
    assert (tmp_path / "teammate" / "review.sqlite").exists()  # and the teammate's own store has it too


def test_a_restarted_kernel_finds_every_decision(four, tmp_path):
    """Decide in a Jupyter kernel, restart it: the new kernel's desk on the same images shows them all."""
    from jupyter_client.manager import start_new_kernel

    client = four[0].client
    ids = [image.id for image in four]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IMAGEKIT_BASE_URL": client.config.base_url,
           "IMAGEKIT_API_KEY": client.config.api_key, "IPYTHONDIR": str(tmp_path / "ipython")}
    manager, kernel = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))

    def run(code: str) -> str:
        printed: list[str] = []
        reply = kernel.execute_interactive(code, timeout=120, output_hook=lambda message: printed.append(
            message["content"].get("text", "")) if message["msg_type"] == "stream" else None)
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(printed)

    try:
        run(f"import imagekit\nik = imagekit.connect()\ndesk = imagekit.review([ik.image(i) for i in {ids}])\n"
            f"desk.rate({ids[0]}, 5); desk.rate({ids[2]}, 2); desk.select({ids[3]}); desk.select({ids[0]})\n"
            f"desk.vote({ids[1]}, {ids[0]}); desk.vote({ids[2]}, {ids[3]}, tie=True); desk.note({ids[1]}, 'crop')")
        manager.restart_kernel(now=True)
        kernel.wait_for_ready(timeout=120)
        assert run("print('desk' in dir())") == "False\n"  # a new kernel: nothing of the old one's
        seen = run(f"import imagekit, json\nik = imagekit.connect()\nd = imagekit.review([ik.image(i) for i in {ids}])\n"
                   "f = d.decisions()\nprint(json.dumps([f['rating'].fillna(0).astype(int).tolist(), "
                   "[i.id for i in d.selected], f['wins'].tolist(), f['ties'].tolist(), f['note'].fillna('').tolist()]))")
    finally:
        kernel.stop_channels()
        manager.shutdown_kernel(now=True)
    assert json.loads(seen) == [[5, 0, 2, 0], [ids[3], ids[0]], [0, 1, 0, 0], [0, 0, 1, 1], ["", "crop", "", ""]]
