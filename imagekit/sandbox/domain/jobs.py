"""Running edits: jobs by request id, cancellation, latency (concurrency slots: ``slots.py``).

An edit's request id is a database row carrying its state, which a cancel in any worker changes and
the running job polls, so that several worker processes serving one database keep every rule
together. Per-user steps take the user's row lock first (:meth:`Database.locked`), so they happen
one at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..interface.errors import Cancelled, SandboxError
from ..store.db import Database
from ..store.outage import unreachable
from ..store.tables import RequestId, User
from .clock import Clock

REQUEST_ID_RETENTION = timedelta(days=7)
"""How long an edit request id stays taken and answers cancelEdit (sandbox clock; in the README)."""
_CANCEL_WAIT = 30.0
_SLICE = 0.02
_POLL = 0.05
"""How often a running edit reads its request id's state, to see a cancel made in another worker."""
_SETTLED = ("completed", "cancelled", "failed")
"""States of a request id whose edit has stopped and whose charge is settled."""


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

    def start(self, session: Session, user_id: int, request_id: str) -> Job:
        """Take ``request_id`` for an edit, in the caller's transaction; if that fails, the caller
        says :meth:`done` (the job is known here from now on, so a cancel reaches it at once)."""
        job = Job(request_id, user_id, self._cancel_requested)
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
        try:
            with self._db.read() as session:
                return session.scalar(select(RequestId.state).where(
                    RequestId.user_id == job.user_id, RequestId.request_id == job.request_id)) == "cancelling"
        except Exception as exc:
            if not unreachable(exc):
                raise
            return False  # no cancel can be recorded meanwhile; one recorded before is read once it is back

    def complete(self, job: Job) -> bool:
        """Decide, atomically with any cancel, that the job completes; False if it was cancelled.
        Deciding again gives the same answer (a commit whose answer was lost is tried again)."""
        with self._db.write() as session:
            row = self._db.locked(session, RequestId, (job.user_id, job.request_id))
            if row is not None and row.state == "completing":
                return True
            if job.cancelled.is_set() or row is None or row.state != "running":
                return False
            row.state = "completing"
            return True

    def done(self, job: Job) -> None:
        """The job has stopped and its outcome is settled with its slot (``ConcurrencyGate.settle``),
        or left to be (``abandon``): a cancel waiting in this process returns."""
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
