"""Concurrency slots: at most ``simultaneousLimit`` operations of one user at once, in every worker.

A running operation holds a row of ``running_slots``, taken under the user's row lock and counted
there. The row records what its work did in the database (the charge, the edit's request id), and
it is given back in the transaction that records the work's outcome (``settle``), so nobody sees
the work done while it still holds the slot, or the slot free while its charge is unsettled.

A slot is a lease: the process running the work renews ``expires_at`` every ``RENEW_EVERY``
seconds. Work that cannot record its outcome is settled as unfinished (refunded; see
``recovery.settle_unfinished``):

- at once, or as soon as the database answers again, when its process knows (``abandon``: the work
  failed, or the database stayed unreachable past ``outage_patience``);
- by any worker once the lease has expired, when nobody knows (the process was killed, or a commit
  whose answer was lost in an outage took a slot nobody renews).

Leases run on the wall clock, not the sandbox clock: tests move the latter, and a lease is about
live processes.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import event, func, select, update
from sqlalchemy.orm import Session

from ..interface.errors import SandboxError
from ..store.db import Database
from ..store.disk import is_full
from ..store.outage import OUTAGE_REFUND, unreachable
from ..store.tables import ConcurrencyPeak, RunningSlot, User
from .clock import Clock, wall_now
from .recovery import settle_unfinished

LEASE = timedelta(seconds=10)
"""A slot not renewed for this long belongs to work whose process is gone."""
RENEW_EVERY = 2.0
_SOON = 0.2
"""How often abandoned slots are tried while the database does not answer."""
log = logging.getLogger(__name__)


class ConcurrencyGate:
    """At most ``limit`` operations of one user at once; the next one gets a 429 with Retry-After.
    Its keeper thread (``start``/``stop``, while the app serves) renews this process's leases and
    settles abandoned and expired slots."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db, self._clock = db, clock
        self._lock = threading.Lock()
        self._held: set[int] = set()
        """Slots of work running in this process: their leases are renewed."""
        self._abandoned: dict[int, tuple[str, str, Callable[[], None] | None]] = {}
        """Slots to settle as unfinished once the database answers: (outcome, reason, cleanup)."""
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._keeper: threading.Thread | None = None
        self._reachable_since: float | None = None

    def acquire(self, session: Session, user_id: int, limit: int) -> int:
        """Take a slot in the caller's transaction (it is given back if that rolls back); its id."""
        self._db.locked(session, User, user_id)
        running = self._count(session, user_id)
        if running >= limit:
            raise SandboxError("simultaneous_limit_exceeded",
                               f"The plan allows {limit} operation(s) at once; {running} running.",
                               headers={"Retry-After": "1"})
        slot = RunningSlot(user_id=user_id, started_at=self._clock.now(), pid=os.getpid(),
                           expires_at=wall_now() + LEASE)
        session.add(slot)
        peak = session.get(ConcurrencyPeak, user_id)
        if peak is None:
            session.add(ConcurrencyPeak(user_id=user_id, peak=running + 1))
        elif peak.peak <= running:
            peak.peak = running + 1
        session.flush()
        slot_id = slot.slot_id
        # Renewed only once it exists for others: a commit that failed (even one that happened
        # with its answer lost) leaves a slot nobody renews, which expires.
        _after_commit(session, lambda: self._keep(slot_id))
        return slot_id

    def take(self, user_id: int, limit: int) -> int:
        """:meth:`acquire` in a transaction of its own."""
        with self._db.write() as session:
            return self.acquire(session, user_id, limit)

    @staticmethod
    def record(session: Session, slot_id: int, **done: object) -> None:
        """Note on the slot what its work did (``charge_id``, ``request_id``), in the transaction
        that did it: what settles the slot later finds it there."""
        session.execute(update(RunningSlot).where(RunningSlot.slot_id == slot_id).values(**done))

    def running(self, user_id: int) -> int:
        """How many operations of the user hold a slot now, in any worker."""
        with self._db.read() as session:
            return self._count(session, user_id)

    @staticmethod
    def _count(session: Session, user_id: int) -> int:
        return session.scalar(select(func.count()).select_from(RunningSlot).where(
            RunningSlot.user_id == user_id, RunningSlot.expires_at > wall_now())) or 0

    @staticmethod
    def claim(session: Session, slot_id: int, wait: bool = True) -> RunningSlot | None:
        """The slot, locked in ``session``; None once its work was settled (or, without ``wait``,
        while another transaction is settling it)."""
        return session.get(RunningSlot, slot_id, populate_existing=True,
                           with_for_update={"of": RunningSlot, "skip_locked": not wait})

    def settle(self, session: Session, slot: RunningSlot, outcome: str = "failed",
               reason: str = "The sandbox stopped before this image was finished.") -> None:
        """Give ``slot`` (claimed) back in ``session``'s transaction, settling what its work left
        unfinished as ``outcome`` (see ``recovery.settle_unfinished``)."""
        settle_unfinished(session, slot, outcome, reason)
        session.delete(slot)
        slot_id = slot.slot_id
        _after_commit(session, lambda: self._drop(slot_id))

    def abandon(self, slot_id: int, outcome: str = "failed", cleanup: Callable[[], None] | None = None,
                reason: str = OUTAGE_REFUND) -> None:
        """Settle the slot's work as unfinished now, or as soon as the database answers again;
        ``cleanup`` runs once that settled it (not when it was settled already)."""
        self._drop(slot_id)
        try:
            self._settle_now(slot_id, outcome, reason, cleanup)
        except Exception as exc:
            if not unreachable(exc):
                raise
            with self._lock:
                self._abandoned[slot_id] = (outcome, reason, cleanup)
            self._wake.set()

    def _settle_now(self, slot_id: int, outcome: str, reason: str, cleanup: Callable[[], None] | None,
                    expired: bool = False) -> None:
        """Settle the slot's work as unfinished; with ``expired`` only if its lease has run out (checked
        under its lock: the owner may have renewed it meanwhile), and not while another settles it."""
        with self._db.write() as session:
            slot = self.claim(session, slot_id, wait=not expired)
            if slot is None or (expired and slot.expires_at > wall_now()):
                return
            if expired:
                log.warning("concurrency slot %s of user %s was not renewed (its process stopped, or lost it "
                            "in an outage): settling its work as failed", slot_id, slot.user_id)
            self.settle(session, slot, outcome, reason)
        if cleanup is not None:
            cleanup()

    @property
    def peak(self) -> dict[int, int]:
        """Highest concurrency seen per user (read by tests and benchmarks)."""
        with self._db.read() as session:
            return dict(session.execute(select(ConcurrencyPeak.user_id, ConcurrencyPeak.peak)).all())

    def _keep(self, slot_id: int) -> None:
        with self._lock:
            self._held.add(slot_id)

    def _drop(self, slot_id: int) -> None:
        with self._lock:
            self._held.discard(slot_id)

    def start(self) -> None:
        """Start the keeper thread (while the app serves)."""
        self._keeper = threading.Thread(target=self._run, name="sandbox-slot-keeper", daemon=True)
        self._keeper.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._keeper is not None:
            self._keeper.join(30)

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                self.tend()
            except Exception as exc:
                self._reachable_since = None
                if not _waits(exc):  # a bug: say so, and keep tending
                    log.exception("keeping the concurrency slots failed")
            with self._lock:
                pending = bool(self._abandoned)
            self._wake.wait(_SOON if pending else RENEW_EVERY)

    def tend(self) -> None:
        """One round: renew this process's leases, settle the slots it abandoned, and those whose
        lease expired (once the database has answered long enough for every live process to renew;
        never this process's own, which it knows are alive)."""
        with self._lock:
            held, abandoned = set(self._held), dict(self._abandoned)
        if held:
            # Unguarded: on a full disk the renewal waits for room; the reserve is for settling work.
            with self._db.write(guarded=False) as session:
                session.execute(update(RunningSlot).where(RunningSlot.slot_id.in_(held))
                                .values(expires_at=wall_now() + LEASE))
        for slot_id, (outcome, reason, cleanup) in abandoned.items():
            try:
                self._settle_now(slot_id, outcome, reason, cleanup)
            except Exception as exc:
                if _waits(exc):
                    raise
                log.exception("settling abandoned slot %s failed; its lease will expire", slot_id)
            with self._lock:
                self._abandoned.pop(slot_id, None)
        if self._reachable_since is None:
            self._reachable_since = time.monotonic()
        if time.monotonic() - self._reachable_since < 2 * RENEW_EVERY:
            return
        with self._db.read() as session:
            expired = session.scalars(select(RunningSlot.slot_id).where(RunningSlot.expires_at < wall_now())).all()
        for slot_id in set(expired) - held:
            self._settle_now(slot_id, "failed", "The process drawing this image stopped; it was refunded.", None,
                             expired=True)


def _waits(exc: BaseException) -> bool:
    """Whether a failed round is tried again later, quietly: the database is away, or the disk full."""
    return unreachable(exc) or is_full(exc)


def _after_commit(session: Session, then: Callable[[], None]) -> None:
    event.listen(session, "after_commit", lambda _session: then(), once=True)
