"""What the engines' tests share: a batch run on an engine beside a local one, what the service made
of it, and ``imagekit sweep run`` of a sweep file killed and run again."""

from __future__ import annotations

import re
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from imagekit.workflows.batches.journals.local import LocalJournal
from tests.helpers import balance, sweep_process, user_env, wait_quiet
from tests.utils.service import public_style, server_images

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 4
"""The pro plan's simultaneousLimit (the ``connect`` fixture's default plan)."""


def assert_made_once(batch, box, user_id: int, count: int) -> None:
    """Every row done with ``count`` images, and the service made exactly those (none twice)."""
    frame = batch.to_pandas()
    assert set(frame["row_status"]) == {"done"}, frame["row_status"].value_counts()
    made = server_images(box, user_id)
    assert len(made) == len(batch) * count == len(frame), "an image was made (and charged) twice"
    assert set(frame["image_id"]) == {image_id for image_id, _, _ in made}


def comparable(batch):
    """A batch's results table without what differs from run to run (ids, times, folders)."""
    frame = batch.to_pandas()
    frame["file"] = [Path(file).name for file in frame["file"]]
    return frame.drop(columns=["image_id", "latency"]).sort_values(["key", "file"]).reset_index(drop=True)


def ledger_summary(ik):
    """What the ledger holds of an account's run, by operation and outcome: entries and credits."""
    entries = ik.ledger.to_pandas()
    return sorted(Counter(zip(entries["operation"], entries["status"], entries["credits"])).items())


@contextmanager
def stored_here(monkeypatch) -> Iterator[list[str]]:
    """The names of the images this process writes into a batch's out_dir meanwhile (an engine's
    workers store theirs in their own processes)."""
    from imagekit.workflows.batches import outputs

    written: list[str] = []
    real = outputs.write

    def write(source, store, name, fields):
        written.append(name)
        return real(source, store, name, fields)

    with monkeypatch.context() as patched:
        patched.setattr(outputs, "write", write)
        yield written


def run_on(engine: str, ik, box, tmp_path, rows: int = 12, count: int = 2, **options):
    batch = ik.batch([f"a lighthouse, take {n}" for n in range(rows)], style=public_style(box), count=count)
    return batch.run(progress=False, out_dir=tmp_path / engine, engine=engine, **options)


def sweep_file(folder: Path, style: int, rows: int) -> Path:
    path = folder / "lights.toml"
    path.write_text(f"""
[sweep]
name = "lights"
out_dir = "out"
[axes]
prompt = [{", ".join(f'"a lighthouse, take {n}"' for n in range(rows))}]
[defaults]
style = {style}
""")
    return path


def sweep_run_env(ik, home: Path) -> dict[str, str]:
    """The environment of ``imagekit sweep run`` as ``ik``'s user, with ``ik``'s ledger."""
    return user_env(ik.config.base_url, ik.config.api_key, str(ik.ledger.path), home)


def sweep_run(path: Path, ik, home: Path, *engine: str) -> subprocess.Popen[str]:
    return sweep_process(path, sweep_run_env(ik, home), *engine)


def killed_and_run_again(ik, box, tmp_path, engine: str, address: str) -> None:
    """``imagekit sweep run`` of 40 rows on ``engine`` killed (SIGKILL) with rows done and one in flight,
    then run again: each row made once, the ledger the balance's fall."""
    before = balance(ik)
    path = sweep_file(tmp_path, public_style(box), 40)
    journal = tmp_path / "out" / "journal.sqlite"
    options = ("--engine", engine, "--address", address)
    child = sweep_run(path, ik, tmp_path / "home", *options)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            states = Counter(e.status for e in LocalJournal(journal).load().values()) if journal.exists() else Counter()
            if states["done"] >= 5 and states["sent"] + states["created"] >= 1:
                break
            time.sleep(0.01)
        assert child.poll() is None, f"the sweep ended before it could be killed: {child.communicate()[1][-2000:]}"
        child.kill()
    finally:
        child.communicate()
    left = Counter(e.status for e in LocalJournal(journal).load().values())
    assert left["done"] < 40 and left["sent"] + left["created"] >= 1, left
    wait_quiet(box, ik.user_id)  # a create the killed caller's task sent may still be charging
    again = sweep_run(path, ik, tmp_path / "home", *options)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert out.startswith("sweep lights: 40 of 40 rows done, 120 credits spent in all, "), out
    # the rows this run made were stored by the engine's workers, and it says so; every image is in out
    stored = re.search(rf"^  (\d+) images? stored in (\S+) by the {engine} workers$", out, re.MULTILINE)
    assert stored is not None and 1 <= int(stored[1]) <= 40, out
    assert (ROOT / stored[2]).resolve() == (tmp_path / "out").resolve(), out  # as the file names it, from where it ran
    assert len(list((tmp_path / "out").glob("*.png"))) == 40
    assert Counter(group.rsplit(".", 1)[0] for _, group, _ in server_images(box, ik.user_id)) == \
        Counter({key: 1 for key in LocalJournal(journal).load()}), "a row was made twice"
    assert before - balance(ik) == 40 * 3 == pytest.approx(ik.ledger.total())
