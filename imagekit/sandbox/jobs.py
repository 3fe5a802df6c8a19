"""Running work: per-user concurrency slots, edit jobs by request id, cancellation, latency."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import delete

from .clock import Clock
from .db import Database
from .errors import Cancelled, SandboxError
from .tables import RequestId

REQUEST_ID_RETENTION = timedelta(days=7)
"""How long an edit request id stays taken and answers cancelEdit (sandbox clock; in the README)."""
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
                raise SandboxError("simultaneous_limit_exceeded",
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
    completed: bool = False
    """Set once completion won against any cancel: from then on a cancel changes nothing."""
    finished: threading.Event = field(default_factory=threading.Event)
    """Set once the job has stopped and its charge is settled (kept or refunded)."""

    def check(self) -> None:
        """Raise :class:`Cancelled` once the job was cancelled (called inside engine loops)."""
        if self.cancelled.is_set():
            raise Cancelled(self.request_id)


class JobRegistry:
    """Edit jobs by (user, request id). Every id is recorded in the database (``request_ids``) with
    its outcome, so it is used once, even across restarts; a cancel that arrives first records it as
    ``precancelled``. Running jobs also live here in memory, where a cancel can stop them."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db, self._clock = db, clock
        self._lock = threading.Lock()
        """Held over each id's database check-and-change, so a start and a cancel never interleave."""
        self._jobs: dict[tuple[int, str], Job] = {}

    def start(self, user_id: int, request_id: str) -> Job:
        job = Job(request_id, user_id)
        with self._lock:
            with self._db.write() as session:
                now = self._clock.now()
                session.execute(delete(RequestId).where(RequestId.created_at < now - REQUEST_ID_RETENTION))
                row = session.get(RequestId, (user_id, request_id))
                if row is None:
                    session.add(RequestId(user_id=user_id, request_id=request_id, created_at=now, state="running"))
                elif row.state == "precancelled":
                    row.state = "running"
                    job.cancelled.set()
                else:
                    raise SandboxError("duplicate_request_id",
                                       f"Request id {request_id!r} was used already; send a new one.")
            self._jobs[(user_id, request_id)] = job
        return job

    def complete(self, job: Job) -> bool:
        """Decide, atomically with any cancel, that the job completes; False if it was cancelled."""
        with self._lock:
            if job.cancelled.is_set():
                return False
            job.completed = True
            return True

    def finish(self, job: Job, outcome: str) -> None:
        """The job has stopped (``completed``, ``cancelled`` or ``failed``) and its charge is settled."""
        with self._db.write() as session:
            row = session.get(RequestId, (job.user_id, job.request_id))
            if row is not None:
                row.state = outcome
        with self._lock:
            self._jobs.pop((job.user_id, job.request_id), None)
        job.finished.set()

    def cancel(self, user_id: int, request_id: str) -> str:
        """"cancelled" if the edit is running, not yet arrived or cancelled already; "not_running" once
        it completed or failed (nothing happens)."""
        key = (user_id, request_id)
        with self._lock:
            job = self._jobs.get(key)
            if job is None:
                with self._db.write() as session:
                    row = session.get(RequestId, key)
                    if row is None:
                        session.add(RequestId(user_id=user_id, request_id=request_id,
                                              created_at=self._clock.now(), state="precancelled"))
                    return "cancelled" if row is None or row.state in ("cancelled", "precancelled") else "not_running"
            if job.completed:
                return "not_running"
            job.cancelled.set()
        # Answer once the edit has stopped and been refunded: a balance read next shows no charge.
        job.finished.wait(_CANCEL_WAIT)
        return "cancelled"


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
