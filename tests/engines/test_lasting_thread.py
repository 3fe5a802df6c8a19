"""A local Ray lives as long as the process that started it, whichever thread asked: its processes
die with the *thread* that started them (Linux's parent-death signal, as Ray sets it), and a batch
asks from a worker thread that ends (idle for 10 s, or the run stopped by Ctrl+C). Walked through
the command line, such a run lost Ray after 4 of 12 rows and died a minute later without a word."""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import threading
import time

import pytest

from imagekit.engines.on_ray import on_a_lasting_thread
from tests.helpers import wait_until


def _dies_with_its_thread() -> None:
    """In the child: killed when the thread that started it ends, as Ray's GCS and raylet are."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _start() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], preexec_fn=_dies_with_its_thread)


def test_what_a_lasting_thread_starts_outlives_the_thread_that_asked_for_it():
    started: dict[str, subprocess.Popen[bytes]] = {}

    def ask() -> None:  # a batch's worker thread: it asks, then ends
        started["lasting"] = on_a_lasting_thread(_start)
        started["own"] = _start()

    asker = threading.Thread(target=ask)
    asker.start()
    asker.join()
    try:
        # the child of the ended thread dies (so this test can tell); the lasting thread's lives on
        wait_until(lambda: started["own"].poll() is not None, timeout=60, what="the ended thread's child to die")
        assert started["own"].returncode == -signal.SIGKILL
        # the kernel signals the thread's children as it ends, together: a second on, one still there
        # was not among them (a slower death, under load, could only let a broken version pass)
        time.sleep(1)
        assert started["lasting"].poll() is None
    finally:
        for child in started.values():
            child.kill()
            child.wait()


def test_a_failure_on_the_lasting_thread_is_raised_to_the_caller():
    def refuse() -> None:
        raise ConnectionError("no Ray here")

    with pytest.raises(ConnectionError, match="no Ray here"):
        on_a_lasting_thread(refuse)
