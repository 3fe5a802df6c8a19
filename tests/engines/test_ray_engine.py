"""A batch whose requests are made by the tasks of a local Ray: the same results and ledger as a
local run, never more requests in flight than the account's limit, nothing made or paid twice when
a task's worker is killed or paused or the calling process itself is killed; a Ray Dataset of
prompts made into one of images.

The file runs whole in one xdist worker (``*_engine.py``, see conftest.py at the root): one Ray a
test session, started by its first test and shut down after its last."""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import suppress
from pathlib import Path

import pytest

from tests.clusters import ray_task_pids
from tests.engines.runs import LIMIT, assert_made_once, comparable, killed_and_run_again, run_on, stored_here
from tests.helpers import balance, wait_quiet
from tests.utils.service import public_style


@pytest.mark.slow(30)
def test_on_ray_a_batch_is_the_local_batch_and_a_task_killed_or_paused_costs_nothing_twice(
        connect, box, tmp_path, local_ray, monkeypatch):
    # a task is given up 20 + 5 s after it was sent (a Ray task on a loaded 2-core machine took over 8 s)
    here, there = connect(), connect(timeout=20)
    before_here, before_there = balance(here), balance(there)
    local = run_on("local", here, box, tmp_path, rows=30, count=1)
    struck: list[int] = []
    running = threading.Event()

    def busy(other_than: list[int]) -> int | None:
        """A worker making a request now (Ray names it ``ray::send``), waited for while the run goes on."""
        while running.is_set():
            if found := [pid for pid in ray_task_pids() if pid not in other_than]:
                return found[0]
            time.sleep(0.002)
        return None

    def strike() -> None:  # one task's worker killed as it makes its request, then another's paused 30 s
        if (killed := busy([])) is None:
            return
        os.kill(killed, signal.SIGKILL)
        if (paused := busy([killed])) is None:
            return
        os.kill(paused, signal.SIGSTOP)
        struck.extend([killed, paused])
        time.sleep(30)
        with suppress(ProcessLookupError):  # given up meanwhile: Ray killed it
            os.kill(paused, signal.SIGCONT)

    running.set()
    striker = threading.Thread(target=strike)
    striker.start()
    try:
        with stored_here(monkeypatch) as written:
            on_ray = run_on("ray", there, box, tmp_path, rows=30, count=1)
    finally:
        running.clear()
        striker.join()
    # the workers stored the images; one whose storing task was lost (a struck worker's) is stored here
    assert on_ray.stored_by_workers > 0 and on_ray.stored_by_workers + len(written) == 30
    assert len(struck) == 2, "the run ended before a task's worker could be killed and another's paused"
    wait_quiet(box, there.user_id)
    assert 1 <= box.sandbox.gate.peak[there.user_id] <= LIMIT
    for ik, batch, before in ((here, local, before_here), (there, on_ray, before_there)):
        assert_made_once(batch, box, ik.user_id, 1)
        assert before - balance(ik) == batch.spent == pytest.approx(ik.ledger.total()) == 30 * 3  # 3 an image
    assert comparable(on_ray).equals(comparable(local))
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == sorted(p.name for p in (tmp_path / "local").iterdir())


@pytest.mark.slow(20)
@pytest.mark.parametrize("box", ["spec-exact"], indirect=True)  # (the engine's faults run on both faces above)
def test_a_ray_dataset_of_prompts_comes_back_a_ray_dataset_of_images_made_within_the_limit(
        connect, box, tmp_path, local_ray):
    import pandas as pd
    import ray.data

    import imagekit.ray

    ik = connect()
    before = balance(ik)
    prompts = ray.data.from_items([{"prompt": f"a lighthouse, take {n}", "ratio": ["1:1", "16:9"][n % 2]} for n in range(8)])
    journal = str(tmp_path / "journal.sqlite")
    made = imagekit.ray.generate(prompts, ik, style=public_style(box), out_dir=str(tmp_path / "out"), journal=journal)
    assert isinstance(made, ray.data.Dataset)
    table = made.to_pandas()
    assert list(table["prompt"]) == [f"a lighthouse, take {n}" for n in range(8)]
    assert list(table["ratio"]) == ["1:1", "16:9"] * 4
    assert set(table["row_status"]) == {"done"} and table["image_id"].is_unique
    assert sorted(Path(file).name for file in table["file"]) == sorted(p.name for p in (tmp_path / "out").glob("*.png"))
    assert before - balance(ik) == table["credits"].sum() == pytest.approx(ik.ledger.total()) == 8 * 3
    assert 1 <= box.sandbox.gate.peak[ik.user_id] <= LIMIT
    again = imagekit.ray.generate(prompts, ik, style=public_style(box), out_dir=str(tmp_path / "out"), journal=journal)
    assert again.to_pandas()["image_id"].tolist() == table["image_id"].tolist()  # its journal: nothing made again
    assert before - balance(ik) == 8 * 3
    with pytest.raises(imagekit.ConfigError, match=r"takes a Ray Dataset, not DataFrame: ray.data.from_pandas"):
        imagekit.ray.generate(pd.DataFrame({"prompt": ["a kite"]}), ik)


@pytest.mark.slow(30)
@pytest.mark.parametrize("box", ["spec-exact"], indirect=True)  # (on Dask, the extended face)
def test_the_calling_process_killed_mid_sweep_on_ray_and_run_again_makes_each_row_once(
        connect, box, tmp_path, local_ray):
    killed_and_run_again(connect(), box, tmp_path, "ray", local_ray)
