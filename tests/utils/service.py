"""What a sandbox holds, read from its own side: what was really made and charged."""

from __future__ import annotations

from typing import Any

from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import PATIENT_RETRIES, balance, control  # noqa: F401  (balance: the workflow tests import it from here)


def public_style(box: EmbeddedSandbox) -> int:
    """A style every user of ``box`` may use (a user's own styles are refused to the others)."""
    from sqlalchemy import select

    from imagekit.sandbox.store.tables import Style

    with box.sandbox.db.read() as session:
        return int(session.scalars(select(Style.style_id).where(Style.owner_id.is_(None))).first())


def server_images(box: EmbeddedSandbox, user_id: int) -> list[Any]:
    """The generation images the sandbox holds for a user (what was really made and charged)."""
    from sqlalchemy import select

    from imagekit.sandbox.store.tables import Image

    with box.sandbox.db.read() as session:
        rows = session.scalars(select(Image).where(Image.owner_id == user_id, Image.kind == "generation"))
        return [(image.image_id, image.group_id, image.status) for image in rows]
