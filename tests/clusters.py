"""Real engines for tests: a Dask cluster of separate processes (a ``dask scheduler`` and two
``dask worker``s, as a team runs one) and a local Ray, each started once per test session by the
tests that need it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.helpers import uninstalled

WORKER_TTL = "4s"
"""The scheduler gives up a worker that has not been heard from this long (Dask's default is five
minutes): a paused worker's tasks go to the others within the tests' patience."""


def _ends_with_parent() -> None:
    """In the child, before it runs: SIGTERM when the process that started it ends, however it
    ends (a test run killed leaves no cluster behind)."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class DaskCluster:
    """A scheduler and ``workers`` worker processes (each under a nanny, which starts it again when
    killed) on loopback; ``address`` once started, ``client()`` a ``distributed.Client`` to it."""

    def __init__(self, workers: int = 2, threads: int = 4) -> None:
        self.workers, self.threads = workers, threads
        self.folder = Path(tempfile.mkdtemp(prefix="dask-"))
        self.address = ""
        self._processes: list[subprocess.Popen[bytes]] = []
        self._client: Any = None

    def start(self) -> DaskCluster:
        scheduler_file = self.folder / "scheduler.json"
        env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": WORKER_TTL,
               "DASK_DISTRIBUTED__WORKER__DAEMON": "False", "OPENBLAS_NUM_THREADS": "1"}
        self._spawn([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--no-dashboard", "--scheduler-file", str(scheduler_file)], "scheduler", env)
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            self._check(deadline)
        self.address = json.loads(scheduler_file.read_text())["address"]
        for n in range(self.workers):
            self._spawn([sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads",
                         str(self.threads), "--no-dashboard", "--memory-limit", "0", "--name", f"w{n}",
                         "--local-directory", str(self.folder / f"w{n}")], f"worker{n}", env)
        client = self.client()
        client.wait_for_workers(self.workers, timeout=60)
        return self

    def _spawn(self, command: list[str], name: str, env: dict[str, str]) -> None:
        with open(self.folder / f"{name}.log", "wb") as log:
            self._processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                                    preexec_fn=_ends_with_parent))

    def _check(self, deadline: float) -> None:
        for process in self._processes:
            assert process.poll() is None, self.logs()
        assert time.monotonic() < deadline, "the Dask cluster did not start within 60 s\n" + self.logs()
        time.sleep(0.05)

    def logs(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}"
                         for log in sorted(self.folder.glob("*.log")))

    def client(self) -> Any:
        """The test session's ``distributed.Client`` of this cluster (made once)."""
        if self._client is None:
            from distributed import Client

            self._client = Client(self.address, timeout="30s", set_as_default=False)
        return self._client

    def worker_pids(self) -> dict[str, int]:
        """Worker address -> the pid of the worker process (the nanny's child)."""
        return dict(self.client().run(os.getpid))

    def wait_for_workers(self) -> None:
        """Until every worker is back (a nanny restarts a killed one)."""
        self.client().wait_for_workers(self.workers, timeout=120)

    @contextmanager
    def worker_without_imagekit(self) -> Iterator[str]:
        """One more worker, whose Python finds an ``imagekit`` that cannot be imported (as where it is
        not installed), in the cluster while the block runs; its address. Gone when the block ends."""
        blocked = uninstalled(self.folder / "blocked", "imagekit")
        before = set(self.client().scheduler_info()["workers"])
        env = {**os.environ, "PYTHONPATH": str(blocked), "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
        with open(self.folder / "bare.log", "wb") as log:
            process = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads",
                                        "1", "--no-dashboard", "--memory-limit", "0", "--name", "bare",
                                        "--local-directory", str(self.folder / "bare")],
                                       stdout=log, stderr=subprocess.STDOUT, env=env, preexec_fn=_ends_with_parent,
                                       cwd=self.folder)  # (python -m puts its folder first on the path)
        try:
            self.client().wait_for_workers(self.workers + 1, timeout=60)
            yield next(iter(set(self.client().scheduler_info()["workers"]) - before))
        finally:
            process.terminate()
            process.wait(timeout=30)
            deadline = time.monotonic() + 60
            while len(self.client().scheduler_info()["workers"]) > self.workers:  # the scheduler forgot it
                assert time.monotonic() < deadline, "the bare worker did not leave the cluster"
                time.sleep(0.1)

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        for process in reversed(self._processes):
            process.terminate()
        for process in reversed(self._processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=20)
        self._processes.clear()

    def __enter__(self) -> DaskCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)  # its logs and workers' folders: nothing stays in /tmp



RAY_SETTINGS = {"RAY_agent_register_timeout_ms": "180000", "RAY_worker_register_timeout_seconds": "180",
                "RAY_enable_metrics_collection": "0", "RAY_num_workers_soft_limit": "8"}
"""Ray's own waits for the processes it starts, raised: on a busy 2-core machine (the suite beside
it) its node agent took 40 s to register, past the default, and the raylet gave up. No metrics (a
fifth of its idle CPU). And its idle workers kept (up to 8), not ended after a second idle."""


@contextmanager
def ahead_of_the_rest(nice: int = -10) -> Iterator[None]:
    """The processes this thread starts meanwhile run ahead of the rest of the machine (a lower nice
    value, which they keep; this thread gets its own back): Ray gives its node 30 s to start, a fixed
    wait its processes missed beside the suite on two cores. As it was where raising priority is not
    allowed (not root)."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)  # (this thread's: Linux counts nice per thread)
    except PermissionError:
        pass
    try:
        yield
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, before)


@contextmanager
def local_ray(cpus: int = 1) -> Iterator[str]:
    """A local Ray in this process (its own raylet, GCS and workers; ``cpus`` CPUs' worth of task
    slots: four requests at once each, an account's limit), its session files in a folder of its own
    removed at the end; the GCS address, for other processes to join it."""
    import ray

    folder = Path(tempfile.mkdtemp(prefix="ray-"))
    os.environ.update(RAY_SETTINGS)
    with ahead_of_the_rest():
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False,
                 _temp_dir=str(folder), runtime_env={"env_vars": {"OPENBLAS_NUM_THREADS": "1"}})
        # Ray starts a worker process as a task first needs it (seconds each on a busy machine, more
        # than a test's short request timeouts): the engine's tasks find theirs started.
        ready = ray.remote(num_cpus=0.25, max_retries=0)(_imports_the_tasks)
        ray.get([ready.remote() for _ in range(4 * cpus)], timeout=300)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


def _imports_the_tasks() -> int:
    """In a Ray worker: what the engine's tasks run, imported; held a second, so that the workers the
    warm-up asks for are started side by side."""
    import imagekit.engines.task  # noqa: F401

    time.sleep(1)
    return os.getpid()


def ray_task_pids() -> list[int]:
    """Pids of the Ray worker processes running a request's task now (Ray names them ``ray::send``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::send"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
