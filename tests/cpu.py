"""The CPU a test costs, as the root conftest records it for each test (JUnit's ``cpu_seconds``).

A test's work runs in this process's threads, in children it reaps, and in processes that outlive it:
a JupyterLab, its kernels and chromium, shared by the browser tests and stopped with their package.
Counting only what had been reaped put all of theirs in the package's last test (111 CPU-s in one
studio test). So the live processes below this one count too, each as it stands now: what a page or a
kernel spends during a test is that test's.
"""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds() -> float:
    """CPU used so far by this process (all its threads), its children that ended, and every live
    process below it (their own and their ended children's). A process that leaves the tree (a
    daemon reparented to init) takes its figure with it."""
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ended.ru_utime + ended.ru_stime + _below(os.getpid())


def _below(pid: int) -> float:
    """CPU-seconds of the live processes below ``pid``, from /proc (0 where there is none)."""
    total = 0.0
    pending = _children(pid)
    while pending:
        child = pending.pop()
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile: reaped, its parent's figure holds it
        total += sum(int(ticks) for ticks in fields[11:15]) / _TICKS  # utime stime cutime cstime
        pending += _children(child)
    return total


def _children(pid: int) -> list[int]:
    """The processes ``pid``'s threads started (Linux's /proc/PID/task/TID/children)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        try:
            found += (int(child) for child in Path(f"/proc/{pid}/task/{thread}/children").read_text().split())
        except OSError:
            continue
    return found
