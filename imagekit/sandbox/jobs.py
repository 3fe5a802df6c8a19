"""Running work: per-user concurrency slots, edit jobs by request id, cancellation, latency.

Everything here lives in the database, so that several worker processes serving one database
keep every rule together: a user's running operations are rows (``running_slots``), and an edit's
request id row carries its state, which a cancel in any worker changes and the running job polls.
Per-user steps take the user's row lock first (:meth:`Database.locked`), so they happen one at a time.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from .clock import Clock
from .db import Database
from .errors import Cancelled, SandboxError
from .tables import ConcurrencyPeak, RequestId, RunningSlot, User

REQUEST_ID_RETENTION = timedelta(days=7)
"""How long an edit request id stays taken and answers cancelEdit (sandbox clock; in the README)."""
_CANCEL_WAIT = 30.0
_SLICE = 0.02
_POLL = 0.05
"""How often a running edit reads its request id's state, to see a cancel made in another worker."""
_SETTLED = ("completed", "cancelled", "failed")
"""States of a request id whose edit has stopped and whose charge is settled."""


class ConcurrencyGate:
    """At most ``limit`` operations of one user at once; the next one gets a 429 with Retry-After."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db, self._clock = db, clock

    def acquire(self, session: Session, user_id: int, limit: int) -> int:
        """Take a slot in the caller's transaction (it is given back if that rolls back); its id."""
        self._db.locked(session, User, user_id)
        running = self._count(session, user_id)
        if running >= limit:
            raise SandboxError("simultaneous_limit_exceeded",
                               f"The plan allows {limit} operation(s) at once; {running} running.",
                               headers={"Retry-After": "1"})
        slot = RunningSlot(user_id=user_id, started_at=self._clock.now(), pid=os.getpid())
        session.add(slot)
        peak = session.get(ConcurrencyPeak, user_id)
        if peak is None:
            session.add(ConcurrencyPeak(user_id=user_id, peak=running + 1))
        elif peak.peak <= running:
            peak.peak = running + 1
        session.flush()
        return slot.slot_id

    def running(self, user_id: int) -> int:
        """How many operations of the user hold a slot now, in any worker."""
        with self._db.read() as session:
            return self._count(session, user_id)

    @staticmethod
    def _count(session: Session, user_id: int) -> int:
        return session.scalar(select(func.count()).select_from(RunningSlot).where(RunningSlot.user_id == user_id)) or 0

    def release(self, slot_id: int, session: Session | None = None) -> None:
        """Give the slot back, in ``session``'s transaction when given (giving it back twice is harmless)."""
        if session is None:
            with self._db.write() as session:
                self.release(slot_id, session)
            return
        session.execute(delete(RunningSlot).where(RunningSlot.slot_id == slot_id))

    @contextmanager
    def slot(self, user_id: int, limit: int) -> Iterator[None]:
        with self._db.write() as session:
            slot_id = self.acquire(session, user_id, limit)
        try:
            yield
        finally:
            self.release(slot_id)

    @property
    def peak(self) -> dict[int, int]:
        """Highest concurrency seen per user (read by tests and benchmarks)."""
        with self._db.read() as session:
            return dict(session.execute(select(ConcurrencyPeak.user_id, ConcurrencyPeak.peak)).all())


@dataclass
class Job:
    """One edit in flight, found by its request id."""

    request_id: str
    user_id: int
    cancel_requested: Callable[[Job], bool] = field(repr=False)
    """Reads whether a cancel was recorded for this job (in any worker)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    """Set once the job has stopped and its charge is settled (kept or refunded)."""
    _polled: float = 0.0

    def check(self) -> None:
        """Raise :class:`Cancelled` once the job was cancelled (called inside engine loops)."""
        if not self.cancelled.is_set() and time.monotonic() - self._polled >= _POLL:
            self._polled = time.monotonic()
            if self.cancel_requested(self):
                self.cancelled.set()
        if self.cancelled.is_set():
            raise Cancelled(self.request_id)


class JobRegistry:
    """Edit jobs by (user, request id). Every id is a database row (``request_ids``) whose state is
    the truth: ``running``, ``cancelling`` (a cancel came; the job stops at its next check),
    ``completing`` (completion won; a cancel changes nothing), then ``completed``, ``cancelled``
    or ``failed``; ``precancelled`` when the cancel came before the edit. An id is used once, even
    across restarts. Jobs running in this process are also kept here, so a cancel from this
    process reaches them at once."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db, self._clock = db, clock
        self._lock = threading.Lock()
        self._jobs: dict[tuple[int, str], Job] = {}

    def start(self, user_id: int, request_id: str) -> Job:
        job = Job(request_id, user_id, self._cancel_requested)
        with self._db.write() as session:
            self._db.locked(session, User, user_id)
            now = self._clock.now()
            session.execute(delete(RequestId).where(RequestId.user_id == user_id,
                                                    RequestId.created_at < now - REQUEST_ID_RETENTION))
            row = session.get(RequestId, (user_id, request_id))
            if row is None:
                session.add(RequestId(user_id=user_id, request_id=request_id, created_at=now, state="running"))
            elif row.state == "precancelled":
                row.state = "running"
                job.cancelled.set()
            else:
                raise SandboxError("duplicate_request_id",
                                   f"Request id {request_id!r} was used already; send a new one.")
        with self._lock:
            self._jobs[(user_id, request_id)] = job
        return job

    def _cancel_requested(self, job: Job) -> bool:
        with self._db.read() as session:
            return session.scalar(select(RequestId.state).where(
                RequestId.user_id == job.user_id, RequestId.request_id == job.request_id)) == "cancelling"

    def complete(self, job: Job) -> bool:
        """Decide, atomically with any cancel, that the job completes; False if it was cancelled."""
        with self._db.write() as session:
            row = self._db.locked(session, RequestId, (job.user_id, job.request_id))
            if job.cancelled.is_set() or row is None or row.state != "running":
                return False
            row.state = "completing"
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
        it completed or failed (nothing happens). A running edit is answered for once it has
        stopped and been refunded: a balance read next shows no charge."""
        key = (user_id, request_id)
        with self._db.write() as session:
            self._db.locked(session, User, user_id)
            row = session.get(RequestId, key)
            if row is None:
                session.add(RequestId(user_id=user_id, request_id=request_id, created_at=self._clock.now(),
                                      state="precancelled"))
                return "cancelled"
            if row.state in ("completing", "completed", "failed"):
                return "not_running"
            if row.state in ("cancelled", "precancelled"):
                return "cancelled"
            if row.state == "running":
                row.state = "cancelling"
        with self._lock:
            local = self._jobs.get(key)
        if local is not None:
            local.cancelled.set()
            local.finished.wait(_CANCEL_WAIT)
        else:
            self._await_settled(key)
        return "cancelled"

    def _await_settled(self, key: tuple[int, str]) -> None:
        """Wait for an edit another worker runs to stop, reading its state from the database."""
        deadline = time.monotonic() + _CANCEL_WAIT
        while time.monotonic() < deadline:
            with self._db.read() as session:
                state = session.scalar(select(RequestId.state).where(RequestId.user_id == key[0],
                                                                     RequestId.request_id == key[1]))
            if state in _SETTLED or state is None:
                return
            time.sleep(_SLICE)  # another process settles it: the database is all both can see


def wait(seconds: float, check: Callable[[], None] | None = None, *, since: float | None = None) -> None:
    """Sleep until ``seconds`` have passed (counted from the monotonic time ``since``, default now),
    in short slices, calling ``check`` so a cancel lands promptly."""
    deadline = (time.monotonic() if since is None else since) + seconds
    while (left := deadline - time.monotonic()) > 0:
        if check is not None:
            check()
        time.sleep(min(left, _SLICE))
    if check is not None:
        check()
