"""The ledger's writer: one thread per shared ledger that does the recorder's bookkeeping in order, so
that a database that stops answering never holds up the thread, or the event loop, that sends requests.

Jobs run one at a time in the order given, each in the context it was given in; ``drain`` waits (for a bounded time) until those given so
far are done, so a read sees every write made before it. A forked child starts its own thread.
"""

from __future__ import annotations

import contextvars
import logging
import os
import queue
import threading
import time
from collections.abc import Callable

__all__ = ["Writer", "writer_for", "writers"]

log = logging.getLogger("imagekit")
_writers: dict[str, Writer] = {}
_writers_lock = threading.Lock()


def writer_for(name: str) -> Writer:
    """The process's writer of the ledger named ``name`` (its spool's path)."""
    with _writers_lock:
        return _writers.setdefault(name, Writer(name))


def writers() -> list[Writer]:
    """The writers this process made (the end of the process drains them)."""
    with _writers_lock:
        return list(_writers.values())


class Writer:
    """One thread and its queue of jobs."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._jobs: queue.Queue[Callable[[], object]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def submit(self, job: Callable[[], object]) -> None:
        """Run ``job`` on the writer's thread, after those given before it, in the caller's context
        (the tags in effect where the work was done label its entries)."""
        context = contextvars.copy_context()
        with self._lock:
            if self._thread is None or self._pid != os.getpid():
                self._jobs = queue.Queue()  # a forked child's copy of the queue has no thread behind it
                self._thread = threading.Thread(target=self._run, args=(self._jobs,), daemon=True,
                                                name=f"imagekit ledger writer ({self.name})")
                self._pid = os.getpid()
                self._thread.start()
            self._jobs.put(lambda: context.run(job))

    def here(self) -> bool:
        """Whether the caller is the writer's thread."""
        return threading.current_thread() is self._thread

    def drain(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the jobs given so far; False if some are still to run."""
        if self.here() or self._pid != os.getpid():
            return True
        jobs, deadline = self._jobs, time.monotonic() + seconds
        with jobs.all_tasks_done:
            while jobs.unfinished_tasks:
                if (left := deadline - time.monotonic()) <= 0:
                    return False
                jobs.all_tasks_done.wait(left)
        return True

    def _run(self, jobs: queue.Queue[Callable[[], object]]) -> None:
        while True:
            job = jobs.get()
            try:
                job()
            except Exception:
                log.exception("the ledger's writer failed at one entry; the others go on")
            finally:
                jobs.task_done()
