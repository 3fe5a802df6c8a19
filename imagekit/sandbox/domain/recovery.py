"""Recovery at start: settle what a previous process left unfinished (it may have died by ``kill -9``).

- Images still PENDING are marked FAILED and their share of the charge is refunded.
- Edits that were charged but never committed an image are refunded: not charged, not counted
  against ``maxEditNumber``; their request ids read ``failed`` (``cancelEdit`` answers not_running).
- Files in the image folder that no image row owns (half-finished renders and temporary files)
  are removed, and the render cache is trimmed to its bound.
- Request ids older than ``REQUEST_ID_RETENTION`` are forgotten.
- Concurrency slots the dead run held are freed, and injected faults are cleared (a new run starts
  without them, as it always has).

On a database several servers share (PostgreSQL), another server's work may be running: only work
whose slot's lease ran out is settled (its process is gone, see ``slots``); live slots, the work
they hold and the injected faults stay as they are. Recovery runs once per ``serve``, before its
workers start.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, delete, exists, or_, select, tuple_, update
from sqlalchemy.orm import Session

from ..store.db import Database
from ..store.files import ImageStore
from ..store.render_cache import RenderCache
from ..store.tables import Charge, Image, RequestId, RunningSlot, State
from . import credits
from .catalog import EDIT_TYPES
from .clock import CLOCK_KEY, Clock, wall_now
from .faults import FAULTS_KEY
from .jobs import REQUEST_ID_RETENTION

log = logging.getLogger(__name__)
UNSETTLED = ("running", "cancelling", "completing")
"""States of an edit's request id while the edit has not stopped."""


@dataclass(frozen=True)
class Recovered:
    """What recovery settled."""

    images: int = 0
    """PENDING images failed and refunded."""
    edits: int = 0
    """Charged edits without a result, refunded."""
    files: int = 0
    """Files no row owned, removed."""


def recover(db: Database, clock: Clock, files: ImageStore, cache: RenderCache) -> Recovered:
    """Settle every unfinished operation of an earlier run; run before serving, with the folder claimed."""
    with db.write() as session:
        live = _live_slots(session, db.shared)
        stale = session.scalars(select(Image).where(Image.status == "PENDING",
                                                    _not_held(Image.charge_id, live.charges))).all()
        fail_images(session, stale, "The sandbox stopped before this image was finished.")
        unfinished = session.scalars(select(Charge).where(
            Charge.operation.in_(EDIT_TYPES), Charge.status != "refunded", _not_held(Charge.charge_id, live.charges),
            ~exists().where(Image.charge_id == Charge.charge_id))).all()
        for charge in unfinished:
            credits.refund(session, charge)
        session.execute(update(RequestId).where(
            RequestId.state.in_(UNSETTLED),
            tuple_(RequestId.user_id, RequestId.request_id).not_in(live.requests)).values(state="failed"))
        session.execute(delete(RunningSlot).where(RunningSlot.slot_id.not_in(live.slots)))
        if not db.shared:  # a shared database's faults may be another server's
            session.execute(delete(State).where(State.key == FAULTS_KEY))
        if session.get(State, CLOCK_KEY) is None:  # made here, once, so workers only ever update it
            session.add(State(key=CLOCK_KEY, value="0"))
        session.execute(delete(RequestId).where(RequestId.created_at < clock.now() - REQUEST_ID_RETENTION))
        owned = {name for pair in session.execute(select(Image.file_name, Image.vector_file)) for name in pair if name}
    stray = files.sweep(owned) + cache.sweep({name.split(".")[0] for name in owned})
    cache.evict()  # to a bound that may be lower than the last run's
    done = Recovered(images=len(stale), edits=len(unfinished), files=stray)
    if done != Recovered():
        log.warning("recovered from an earlier run: %d pending image(s) and %d edit(s) refunded, "
                    "%d stray file(s) removed", done.images, done.edits, done.files)
    return done


@dataclass(frozen=True)
class _Live:
    """Slots another server's live work holds (their leases still run), and what that work did."""

    slots: frozenset[int] = frozenset()
    charges: frozenset[int] = frozenset()
    requests: frozenset[tuple[int, str]] = frozenset()


def _live_slots(session: Session, shared: bool) -> _Live:
    """On a shared database, the slots whose leases still run; on one this process serves alone
    (its folder claimed), none: every slot left is a dead run's, whatever its lease says."""
    if not shared:
        return _Live()
    slots = session.scalars(select(RunningSlot).where(RunningSlot.expires_at > wall_now())).all()
    return _Live(frozenset(slot.slot_id for slot in slots),
                 frozenset(slot.charge_id for slot in slots if slot.charge_id is not None),
                 frozenset((slot.user_id, slot.request_id) for slot in slots if slot.request_id is not None))


def _not_held(charge_id: Any, held: frozenset[int]) -> ColumnElement[bool]:
    """The row's charge is not one of live work's (no charge at all counts as not held)."""
    return or_(charge_id.is_(None), charge_id.not_in(held))


def fail_images(session: Session, images: Sequence[Image], reason: str) -> None:
    """Mark PENDING ``images`` FAILED with ``reason``, each one's share of its charge refunded."""
    for image in images:
        image.status, image.error = "FAILED", reason
        charge = session.get(Charge, image.charge_id) if image.charge_id and image.unit_price else None
        if charge is not None:
            credits.refund(session, charge, image.unit_price)


def settle_unfinished(session: Session, slot: RunningSlot, outcome: str, reason: str) -> None:
    """Settle what the work holding ``slot`` (claimed) left unfinished, in ``session``'s transaction:

    - a create: its images still PENDING fail with ``reason``, each refunded;
    - an edit (the slot has its request id): without a result its charge is refunded and its request
      id reads ``outcome``; with one (committed before its process stopped) it reads completed.
    """
    charge = session.get(Charge, slot.charge_id) if slot.charge_id is not None else None
    if slot.request_id is None:
        if charge is not None:
            fail_images(session, session.scalars(select(Image).where(
                Image.charge_id == charge.charge_id, Image.status == "PENDING")).all(), reason)
        return
    made = charge is not None and bool(session.scalar(select(exists().where(Image.charge_id == charge.charge_id))))
    if charge is not None and not made and charge.refunded < charge.credits:
        credits.refund(session, charge)
    row = Database.locked(session, RequestId, (slot.user_id, slot.request_id))
    if row is not None and row.state in UNSETTLED:
        row.state = "completed" if made else outcome
