"""Recovery at start: settle what a previous process left unfinished (it may have died by ``kill -9``).

- Images still PENDING are marked FAILED and their share of the charge is refunded.
- Edits that were charged but never committed an image are refunded: not charged, not counted
  against ``maxEditNumber``; their request ids read ``failed`` (``cancelEdit`` answers not_running).
- Files in the image folder that no image row owns (half-finished renders and temporary files)
  are removed.
- Request ids older than ``REQUEST_ID_RETENTION`` are forgotten.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import delete, exists, select, update

from . import credits
from .catalog import EDIT_TYPES
from .jobs import REQUEST_ID_RETENTION
from .tables import Charge, Image, RequestId

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recovered:
    """What recovery settled."""

    images: int = 0
    """PENDING images failed and refunded."""
    edits: int = 0
    """Charged edits without a result, refunded."""
    files: int = 0
    """Files no row owned, removed."""


def recover(sandbox) -> Recovered:
    """Settle every unfinished operation of an earlier run; run before serving, with the folder claimed."""
    with sandbox.db.write() as session:
        stale = session.scalars(select(Image).where(Image.status == "PENDING")).all()
        for image in stale:
            image.status, image.error = "FAILED", "The sandbox stopped before this image was finished."
            if image.charge_id and image.unit_price:
                credits.refund(session, session.get(Charge, image.charge_id), image.unit_price)
        unfinished = session.scalars(select(Charge).where(
            Charge.operation.in_(EDIT_TYPES), Charge.status != "refunded",
            ~exists().where(Image.charge_id == Charge.charge_id))).all()
        for charge in unfinished:
            credits.refund(session, charge)
        session.execute(update(RequestId).where(RequestId.state == "running").values(state="failed"))
        session.execute(delete(RequestId).where(RequestId.created_at < sandbox.clock.now() - REQUEST_ID_RETENTION))
        owned = {name for pair in session.execute(select(Image.file_name, Image.vector_file)) for name in pair if name}
    done = Recovered(images=len(stale), edits=len(unfinished), files=sandbox.store.sweep(owned))
    if done != Recovered():
        log.warning("recovered from an earlier run: %d pending image(s) and %d edit(s) refunded, "
                    "%d stray file(s) removed", done.images, done.edits, done.files)
    return done
