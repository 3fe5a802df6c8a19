"""``imagekit sandbox ...``: run a command, or serve a data folder on a free port (a real subprocess).

The helpers every test of a served sandbox uses; the tests of ``imagekit/sandbox/serving`` (workers,
sockets, bursts) sit beside them in this package."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import httpx

from imagekit.cli import main
from tests.helpers import TLS, free_port


def imagekit(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run the command line and return what it printed; with ``check`` a non-zero exit fails the test.

    ``serve`` runs in a process of its own (it serves until stopped); every other command runs here,
    through the console script's own ``main``: a process each cost a second of imports, some 40 times."""
    if "serve" in args:
        return subprocess.run([sys.executable, "-m", "imagekit.cli", *args], capture_output=True, text=True,
                              timeout=120, check=check)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(args))
    done = subprocess.CompletedProcess(["imagekit", *args], status, out.getvalue(), err.getvalue())
    if check:
        assert status == 0, f"imagekit {' '.join(args)} exited {status}: {done.stderr}"
    return done


@dataclass
class Served:
    url: str
    process: subprocess.Popen

    def output(self) -> str:
        return self.process.stdout.read().decode() if self.process.stdout else ""


def start_serving(data_dir, *args: str, host: str = "127.0.0.1", port: int | None = None,
                  log: Path | None = None) -> Served:
    """``imagekit sandbox serve`` in a subprocess, returned once it answers HTTP. Its output goes to
    ``log`` when given: a server that logs a lot would stall on a full pipe nobody reads."""
    port = port or free_port()
    with open(log, "ab") if log else nullcontext(subprocess.PIPE) as output:
        process = subprocess.Popen([sys.executable, "-m", "imagekit.cli", "sandbox", "serve", "--data", str(data_dir),
                                    "--host", host, "--port", str(port), "--log-level", "warning", *args],
                                   stdout=output, stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, process.stdout.read().decode()
        try:
            # Any answer (a 404 here) means it serves; /openapi.json would cost the server 0.3 s to build.
            httpx.get(url + "/", timeout=5, verify=TLS)
            return Served(url, process)
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the sandbox did not start answering within 60 s"
            time.sleep(0.1)  # polling a port that is not open yet: there is no event to wait on


@contextmanager
def serving(data_dir, *args: str, **options) -> Iterator[Served]:
    """A served sandbox for the block, stopped (SIGTERM) afterwards."""
    served = start_serving(data_dir, *args, **options)
    try:
        yield served
    finally:
        served.process.terminate()
        served.process.wait(30)
