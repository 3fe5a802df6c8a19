"""Reading a reference image: the caller's own image by path, or a ``data:`` URL. Nothing else.

No URL is ever fetched: anything that is not a path to one of the caller's images (bare, or
absolute on this very host) nor a ``data:`` URL is refused before any I/O (no SSRF).
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import urlsplit

import numpy as np
from sqlalchemy.orm import Session

from ..engines.edits.codecs import decode_image
from ..interface.errors import SandboxError
from ..store.files import ImageStore
from ..store.tables import Image, User

_OWN_PATH = re.compile(r"^/api/images/(\d{1,15})/binary$")
_DATA_URL = re.compile(r"^data:(image/(?:png|jpeg|jpg|webp))?(;[\w=.-]+)*;base64,(.*)$", re.S | re.I)


def own_image(session: Session, user: User, image_id: int) -> Image:
    """One of the caller's images; an unknown id and another user's id answer alike (404)."""
    image = session.get(Image, image_id)
    if image is None or image.owner_id != user.user_id:
        raise SandboxError("image_not_found", f"No image {image_id}.")
    return image


def ready_image(session: Session, user: User, image_id: int) -> Image:
    """One of the caller's completed images (a source for edits and references)."""
    image = own_image(session, user, image_id)
    if image.status != "COMPLETED":
        raise SandboxError("image_not_ready", f"Image {image_id} is {image.status}, not COMPLETED.")
    return image


def read_reference(session: Session, user: User, source: str, store: ImageStore, host: str,
                   max_bytes: int, max_pixels: int) -> tuple[np.ndarray, int | None]:
    """RGB pixels of a reference and, when it is one of the caller's images, its id."""
    if source.startswith("data:"):
        match = _DATA_URL.match(source)
        if match is None:
            raise SandboxError("unsupported_image_source", "A data: URL must be base64 PNG, JPEG or WebP.")
        if len(match.group(3)) > max_bytes * 4 // 3 + 4:
            raise SandboxError("payload_too_large", f"The image is over {max_bytes} bytes.")
        try:
            data = base64.b64decode(match.group(3), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise SandboxError("invalid_image", "The data: URL is not valid base64.") from exc
        return decode_image(data, max_bytes=max_bytes, max_pixels=max_pixels), None
    parts = urlsplit(source)
    same_host = not parts.scheme or (parts.scheme in ("http", "https") and parts.netloc == host)
    path = _OWN_PATH.match(parts.path) if same_host and not parts.fragment else None
    if path is None:
        raise SandboxError("unsupported_image_source", "A reference image must be /api/images/<id>/binary of "
                           "your own image or a data: URL; other URLs are not fetched.")
    image = ready_image(session, user, int(path.group(1)))
    assert image.file_name is not None  # a COMPLETED image has its file: both are set in one write
    return store.read_pixels(image.file_name)[..., :3], image.image_id
