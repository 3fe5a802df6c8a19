"""A batch whose requests are made by the tasks of a real Dask cluster (a scheduler and two worker
processes): the same results and ledger as a local run, never more requests in flight than the
account's limit, and nothing made or paid twice when a worker is killed or paused or the calling
process itself is killed.

The file runs whole in one xdist worker (``*_engine.py``, see conftest.py at the root): one cluster
a test session, started by its first test and stopped after its last."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from contextlib import suppress
from pathlib import Path

import pytest

import imagekit
from imagekit.workflows.batches.journals.local import LocalJournal
from tests.engines.runs import (
    LIMIT,
    assert_made_once,
    comparable,
    killed_and_run_again,
    ledger_summary,
    run_on,
    stored_here,
)
from tests.helpers import balance, wait_quiet
from tests.utils.service import public_style, server_images
from tests.utils.users import make_user


@pytest.mark.slow(20)
def test_on_dask_a_batch_is_the_local_batch_and_the_account_never_has_more_in_flight_than_its_limit(
        connect, box, tmp_path, dask_cluster, monkeypatch):
    here, there = connect(), connect()
    before_here, before_there = balance(here), balance(there)
    local = run_on("local", here, box, tmp_path)
    with stored_here(monkeypatch) as written:
        on_dask = run_on("dask", there, box, tmp_path, address=dask_cluster.address)
    assert on_dask.stored_by_workers == 24 and written == []  # the workers stored every image, none came here
    assert 1 <= box.sandbox.gate.peak[there.user_id] <= LIMIT
    for ik, batch, before in ((here, local, before_here), (there, on_dask, before_there)):
        assert_made_once(batch, box, ik.user_id, 2)
        assert before - balance(ik) == batch.spent == pytest.approx(ik.ledger.total()) == 12 * 2 * 3  # 3 an image
    assert comparable(on_dask).equals(comparable(local))
    assert ledger_summary(there) == ledger_summary(here)
    assert sorted(p.name for p in (tmp_path / "dask").iterdir()) == sorted(p.name for p in (tmp_path / "local").iterdir())


@pytest.mark.slow(30)
def test_a_dask_worker_killed_and_another_paused_past_its_tasks_time_cost_nothing_twice(
        connect, box, tmp_path, dask_cluster):
    ik = connect(timeout=3)  # a task is given up 3 + 5 s after it was sent
    before = balance(ik)
    journal = tmp_path / "journal.sqlite"
    pids = list(dask_cluster.worker_pids().values())
    faults: list[str] = []

    def strike() -> None:  # once rows are in flight: one worker killed, the other paused for 10 s
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            states = Counter(e.status for e in LocalJournal(journal).load().values()) if journal.exists() else Counter()
            if states["done"] >= 3 and states["sent"] + states["created"] >= 1:
                break
            time.sleep(0.02)
        os.kill(pids[0], signal.SIGKILL)
        os.kill(pids[1], signal.SIGSTOP)
        faults.append(f"struck with {dict(states)}")
        time.sleep(10)
        with suppress(ProcessLookupError):  # its nanny may have ended it: the scheduler gave it up
            os.kill(pids[1], signal.SIGCONT)

    striker = threading.Thread(target=strike)
    striker.start()
    try:
        batch = ik.batch([f"a lighthouse, take {n}" for n in range(30)], style=public_style(box))
        batch.run(progress=False, journal=journal, out_dir=tmp_path / "out", engine="dask",
                  address=dask_cluster.address)  # the probe waits settle_delay (0.5 s) for a lost create to arrive
    finally:
        striker.join()
        dask_cluster.wait_for_workers()
    assert faults, "the run ended before a worker could be struck"
    wait_quiet(box, ik.user_id)
    assert_made_once(batch, box, ik.user_id, 1)
    assert 1 <= box.sandbox.gate.peak[ik.user_id] <= LIMIT
    assert before - balance(ik) == 30 * 3 == pytest.approx(ik.ledger.total()) == batch.to_pandas()["credits"].sum()
    assert len(list((tmp_path / "out").glob("*.png"))) == 30


@pytest.mark.slow(30)
@pytest.mark.parametrize("box", ["extended"], indirect=True)  # (on Ray, spec-exact: each face met by one engine)
def test_the_calling_process_killed_mid_sweep_on_dask_and_run_again_makes_each_row_once(
        connect, box, tmp_path, dask_cluster):
    killed_and_run_again(connect(), box, tmp_path, "dask", dask_cluster.address)


def test_a_worker_without_imagekit_is_named_in_one_line_before_anything_is_sent(dask_cluster, _boxes, tmp_path):
    box = _boxes("extended")
    user_id, key = make_user(box, "pro")
    ik = imagekit.Client(box.url, key, ledger=str(tmp_path / "ledger.sqlite"))
    before = balance(ik)
    batch = ik.batch(["a lighthouse"], style=public_style(box))
    with dask_cluster.worker_without_imagekit() as bare, \
            pytest.raises(imagekit.ConfigError) as refused:
        batch.run(progress=False, out_dir=tmp_path / "out", engine=dask_cluster.client())
    assert str(refused.value) == (
        f"1 of the 3 Dask workers at {dask_cluster.address} cannot import imagekit.engines.task ({bare}: "
        "ModuleNotFoundError: No module named 'imagekit'): install imagekit where each worker runs (pip install imagekit)")
    assert "\n" not in str(refused.value) and not (tmp_path / "out").exists()
    assert balance(ik) == before and server_images(box, user_id) == []
    ik.close()


@pytest.mark.slow(10)
def test_a_dask_dataframe_of_prompts_comes_back_a_dask_dataframe_of_images_made_within_the_limit(
        connect, box, tmp_path, dask_cluster):
    import dask.dataframe as dd
    import pandas as pd

    from imagekit.dask import generate

    ik = connect()
    before = balance(ik)
    prompts = dd.from_pandas(pd.DataFrame({"prompt": [f"a lighthouse, take {n}" for n in range(8)],
                                           "ratio": ["1:1", "16:9"] * 4}), npartitions=2)
    made = generate(prompts, ik, client=dask_cluster.client(), style=public_style(box),
                                  out_dir=str(tmp_path / "out"))
    assert isinstance(made, dd.DataFrame) and made.npartitions == 2
    table = made.compute()
    assert list(table["prompt"]) == list(prompts["prompt"].compute()) and list(table["ratio"]) == ["1:1", "16:9"] * 4
    assert set(table["row_status"]) == {"done"} and table["image_id"].is_unique
    assert sorted(Path(file).name for file in table["file"]) == sorted(p.name for p in (tmp_path / "out").glob("*.png"))
    assert before - balance(ik) == table["credits"].sum() == pytest.approx(ik.ledger.total()) == 8 * 3
    assert 1 <= box.sandbox.gate.peak[ik.user_id] <= LIMIT
    with pytest.raises(imagekit.ConfigError, match=r"takes a Dask DataFrame, not DataFrame: dask.dataframe.from_pandas"):
        generate(prompts.compute(), ik, client=dask_cluster.client())
