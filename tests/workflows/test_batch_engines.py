"""A batch whose requests are made by the tasks of a real Dask cluster (a scheduler and two worker
processes) or of a local Ray: the same results and ledger as a local run, never more requests in
flight than the account's limit, and nothing made or paid twice when a worker is killed or paused
or the calling process itself is killed.

These tests share one xdist worker (``*_engines.py``, see conftest.py at the root), so the session
starts one cluster and one Ray, and only when one of them runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from contextlib import suppress
from pathlib import Path

import pytest

import imagekit
from imagekit.workflows.batches.journals.local import LocalJournal
from tests.clusters import ray_task_pids
from tests.helpers import balance, wait_quiet
from tests.utils.service import public_style, server_images
from tests.utils.users import make_user

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


def run_on(engine: str, ik, box, tmp_path, rows: int = 12, count: int = 2, **options):
    batch = ik.batch([f"a lighthouse, take {n}" for n in range(rows)], style=public_style(box), count=count)
    return batch.run(progress=False, out_dir=tmp_path / engine, engine=engine, **options)


@pytest.mark.slow(20)
def test_on_dask_a_batch_is_the_local_batch_and_the_account_never_has_more_in_flight_than_its_limit(
        connect, box, tmp_path, dask_cluster):
    here, there = connect(), connect()
    before_here, before_there = balance(here), balance(there)
    local = run_on("local", here, box, tmp_path)
    on_dask = run_on("dask", there, box, tmp_path, address=dask_cluster.address)
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
    return {**os.environ, "IMAGEKIT_BASE_URL": ik.config.base_url, "IMAGEKIT_API_KEY": ik.config.api_key,
            "IMAGEKIT_LEDGER_URL": str(ik.ledger.path), "IMAGEKIT_HOME": str(home), "PYTHONPATH": str(ROOT)}


def sweep_run(path: Path, ik, home: Path, *engine: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "imagekit.cli", "sweep", "run", str(path), "--no-progress", *engine],
                            cwd=ROOT, env=sweep_run_env(ik, home), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@pytest.mark.slow(30)
def test_the_calling_process_killed_mid_sweep_on_dask_and_run_again_makes_each_row_once(
        connect, box, tmp_path, dask_cluster):
    killed_and_run_again(connect(), box, tmp_path, "dask", dask_cluster.address)


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
    assert Counter(group.rsplit(".", 1)[0] for _, group, _ in server_images(box, ik.user_id)) == \
        Counter({key: 1 for key in LocalJournal(journal).load()}), "a row was made twice"
    assert before - balance(ik) == 40 * 3 == pytest.approx(ik.ledger.total())


@pytest.mark.slow(20)
def test_a_wrong_address_or_a_missing_extra_is_one_line_and_nothing_is_made(_boxes, tmp_path):
    # Refused before anything is sent: one face of the sandbox is enough.
    box = _boxes("extended")
    ik = imagekit.Client(box.url, make_user(box, "pro")[1], ledger=str(tmp_path / "ledger.sqlite"))
    before = balance(ik)
    path = sweep_file(tmp_path, public_style(box), 2)
    refused = sweep_run(path, ik, tmp_path / "home", "--engine", "dask", "--address", "tcp://127.0.0.1:1")
    out, err = refused.communicate(timeout=120)
    assert (refused.returncode, out) == (1, "")
    assert err == "error: no Dask scheduler answered at 'tcp://127.0.0.1:1' within 10 s: check the address " \
                  "(tcp://host:8786) and that the scheduler runs\n"
    on_ray = sweep_run(path, ik, tmp_path / "home", "--engine", "ray", "--address", "127.0.0.1:1")
    assert on_ray.communicate(timeout=120)[1] == "error: no Ray cluster answers at '127.0.0.1:1' within 10 s: check " \
                                                 "the address (host:6379, or ray://host:10001) and that the cluster runs\n"
    unknown = sweep_run(path, ik, tmp_path / "home", "--engine", "dask", "--address", "nonsense://host")
    assert unknown.communicate(timeout=120)[1] == "error: address='nonsense://host': a Dask scheduler's address " \
                                                  "looks like tcp://host:8786 (schemes: inproc, tcp, tls, ucx, ws, wss)\n"
    without = subprocess.run([sys.executable, "-c", "import sys; sys.modules['distributed'] = None\n"
                              "from imagekit.cli import main; sys.exit(main())", "sweep", "run", str(path),
                              "--engine", "dask", "--address", "tcp://127.0.0.1:1"],
                             cwd=ROOT, env=sweep_run_env(ik, tmp_path / "home"), text=True, capture_output=True)
    assert (without.returncode, without.stderr) == (1, "error: this needs distributed, which is not installed: "
                                                       "pip install 'imagekit[dask]'\n")
    assert not (tmp_path / "out").exists() and balance(ik) == before
    ik.close()


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


@pytest.mark.slow(30)
def test_on_ray_a_batch_is_the_local_batch_and_a_task_killed_or_paused_costs_nothing_twice(
        connect, box, tmp_path, local_ray):
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
        on_ray = run_on("ray", there, box, tmp_path, rows=30, count=1)
    finally:
        running.clear()
        striker.join()
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
@pytest.mark.parametrize("box", ["spec-exact"], indirect=True)  # (on Dask, on both faces)
def test_the_calling_process_killed_mid_sweep_on_ray_and_run_again_makes_each_row_once(
        connect, box, tmp_path, local_ray):
    killed_and_run_again(connect(), box, tmp_path, "ray", local_ray)
