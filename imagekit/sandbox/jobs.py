"""Running work: per-user concurrency slots, edit jobs by request id, cancellation, latency."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .errors import Cancelled, SandboxError

_TOMBSTONE_SECONDS = 600.0
_CANCEL_WAIT = 30.0
_SLICE = 0.02


class ConcurrencyGate:
    """At most ``limit`` operations of one user at once; the next one gets a 429 with Retry-After."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, int] = {}
        self.peak: dict[int, int] = {}
        """Highest concurrency seen per user (read by tests and benchmarks)."""

    def try_acquire(self, user_id: int, limit: int) -> None:
        with self._lock:
            running = self._running.get(user_id, 0)
            if running >= limit:
                raise SandboxError(429, "simultaneous_limit_exceeded",
                                   f"The plan allows {limit} operation(s) at once; {running} running.",
                                   headers={"Retry-After": "1"})
            self._running[user_id] = running + 1
            self.peak[user_id] = max(self.peak.get(user_id, 0), running + 1)

    def release(self, user_id: int) -> None:
        with self._lock:
            self._running[user_id] -= 1

    def running(self, user_id: int) -> int:
        with self._lock:
            return self._running.get(user_id, 0)

    @contextmanager
    def slot(self, user_id: int, limit: int) -> Iterator[None]:
        self.try_acquire(user_id, limit)
        try:
            yield
        finally:
            self.release(user_id)


@dataclass
class Job:
    """One edit in flight, found by its request id."""

    request_id: str
    user_id: int
    cancelled: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    """Set once the job has stopped and its charge is settled (kept or refunded)."""

    def check(self) -> None:
        """Raise :class:`Cancelled` once the job was cancelled (called inside engine loops)."""
        if self.cancelled.is_set():
            raise Cancelled(self.request_id)


class JobRegistry:
    """Edit jobs by (user, request id). A cancel that arrives first leaves a tombstone."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[tuple[int, str], Job] = {}
        self._done: dict[tuple[int, str], float] = {}
        self._tombstones: dict[tuple[int, str], float] = {}

    def start(self, user_id: int, request_id: str) -> Job:
        key = (user_id, request_id)
        with self._lock:
            self._expire()
            if key in self._jobs or key in self._done:
                raise SandboxError(409, "duplicate_request_id",
                                   f"Request id {request_id!r} was used already; send a new one.")
            job = Job(request_id, user_id)
            if self._tombstones.pop(key, None) is not None:
                job.cancelled.set()
            self._jobs[key] = job
            return job

    def complete(self, job: Job) -> bool:
        """Decide, atomically with any cancel, that the job completes; False if it was cancelled."""
        with self._lock:
            if job.cancelled.is_set():
                return False
            key = (job.user_id, job.request_id)
            self._jobs.pop(key, None)
            self._done[key] = time.monotonic()
            return True

    def finish(self, job: Job) -> None:
        """The job has stopped and its charge is settled."""
        with self._lock:
            key = (job.user_id, job.request_id)
            self._jobs.pop(key, None)
            self._done[key] = time.monotonic()
        job.finished.set()

    def cancel(self, user_id: int, request_id: str) -> str:
        """"cancelled" if the edit is running or not yet arrived; "not_running" once it finished."""
        key = (user_id, request_id)
        with self._lock:
            self._expire()
            if key in self._done:
                return "not_running"
            job = self._jobs.get(key)
            if job is None:
                self._tombstones[key] = time.monotonic()
                return "cancelled"
            job.cancelled.set()
        # Answer once the edit has stopped and been refunded: a balance read next shows no charge.
        job.finished.wait(_CANCEL_WAIT)
        return "cancelled"

    def _expire(self) -> None:
        horizon = time.monotonic() - _TOMBSTONE_SECONDS
        for table in (self._tombstones, self._done):
            for key in [k for k, at in table.items() if at < horizon]:
                del table[key]


def wait(seconds: float, check=None, *, since: float | None = None) -> None:
    """Sleep until ``seconds`` have passed (counted from the monotonic time ``since``, default now),
    in short slices, calling ``check`` so a cancel lands promptly."""
    deadline = (time.monotonic() if since is None else since) + seconds
    while (left := deadline - time.monotonic()) > 0:
        if check is not None:
            check()
        time.sleep(min(left, _SLICE))
    if check is not None:
        check()
