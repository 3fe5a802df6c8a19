"""Recovery at start: settle what a previous process left unfinished (it may have died by ``kill -9``).

- Images still PENDING are marked FAILED and their share of the charge is refunded.
- Edits that were charged but never committed an image are refunded: not charged, not counted
  against ``maxEditNumber``; their request ids read ``failed`` (``cancelEdit`` answers not_running).
- Files in the image folder that no image row owns (half-finished renders and temporary files)
  are removed, and the render cache is trimmed to its bound.
- Request ids older than ``REQUEST_ID_RETENTION`` are forgotten.
- Concurrency slots the dead run held are freed, and injected faults are cleared (a new run starts
  without them, as it always has).

On a database several workers share, recovery runs once per ``serve``, before the workers start:
it would take a live worker's work for a dead run's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import delete, exists, select, update
from sqlalchemy.orm import Session

from ..store.db import Database
from ..store.tables import Charge, Image, RequestId, RunningSlot, State
from . import credits
from .catalog import EDIT_TYPES
from .clock import CLOCK_KEY
from .faults import FAULTS_KEY
from .jobs import REQUEST_ID_RETENTION

if TYPE_CHECKING:
    from ..service import Sandbox

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


def recover(sandbox: Sandbox) -> Recovered:
    """Settle every unfinished operation of an earlier run; run before serving, with the folder claimed."""
    with sandbox.db.write() as session:
        stale = session.scalars(select(Image).where(Image.status == "PENDING")).all()
        fail_images(session, stale, "The sandbox stopped before this image was finished.")
        unfinished = session.scalars(select(Charge).where(
            Charge.operation.in_(EDIT_TYPES), Charge.status != "refunded",
            ~exists().where(Image.charge_id == Charge.charge_id))).all()
        for charge in unfinished:
            credits.refund(session, charge)
        session.execute(update(RequestId).where(RequestId.state.in_(UNSETTLED)).values(state="failed"))
        session.execute(delete(RunningSlot))
        session.execute(delete(State).where(State.key == FAULTS_KEY))
        if session.get(State, CLOCK_KEY) is None:  # made here, once, so workers only ever update it
            session.add(State(key=CLOCK_KEY, value="0"))
        session.execute(delete(RequestId).where(RequestId.created_at < sandbox.clock.now() - REQUEST_ID_RETENTION))
        owned = {name for pair in session.execute(select(Image.file_name, Image.vector_file)) for name in pair if name}
    cache = sandbox.renderer.cache
    stray = sandbox.store.sweep(owned) + cache.sweep({name.split(".")[0] for name in owned})
    cache.evict()  # to a bound that may be lower than the last run's
    done = Recovered(images=len(stale), edits=len(unfinished), files=stray)
    if done != Recovered():
        log.warning("recovered from an earlier run: %d pending image(s) and %d edit(s) refunded, "
                    "%d stray file(s) removed", done.images, done.edits, done.files)
    return done


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
