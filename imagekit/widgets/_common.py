"""Pieces the widgets share: binary traits, image loading, plain-words errors."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path
from typing import Any

from traitlets import Bytes

from ..errors import APIError, ImagekitError

log = logging.getLogger("imagekit.widgets")


def _to_bytes(value: Any, widget: Any) -> bytes:
    # The browser's buffers arrive as memoryview; a plain Bytes trait would reject them silently.
    return b"" if value is None else bytes(value)


def _from_bytes(value: bytes, widget: Any) -> bytes:
    return value


def binary_trait(help: str) -> Bytes:
    """A Bytes trait synced as a binary buffer in both directions."""
    return Bytes(b"", help=help).tag(sync=True, from_json=_to_bytes, to_json=_from_bytes)


def load_picture(image: Any) -> tuple[bytes, Any, Any]:
    """(encoded bytes, PIL image, Image handle or None) from an Image handle, a PIL image or a path."""
    from PIL import Image as PILImage

    handle = None
    if hasattr(image, "read") and hasattr(image, "id"):
        handle, data = image, image.read("png")
    elif isinstance(image, PILImage.Image):
        out = io.BytesIO()
        image.save(out, format="PNG")
        data = out.getvalue()
    elif isinstance(image, (str, os.PathLike)):
        data = Path(image).read_bytes()
    else:
        raise TypeError(f"expected an Image handle, a PIL image or a path, got {type(image).__name__}")
    picture = PILImage.open(io.BytesIO(data))
    picture.load()
    if picture.format not in ("PNG", "JPEG", "WEBP"):  # what browsers show without help
        out = io.BytesIO()
        picture.convert("RGBA").save(out, format="PNG")
        data = out.getvalue()
    return data, picture, handle


def plain_error(exc: BaseException) -> str:
    """One line saying what went wrong, for people: never a traceback."""
    if isinstance(exc, APIError):
        name = (exc.data or type(exc).__name__).replace("_", " ")
        detail = exc.message if exc.message and exc.message != exc.data else ""
        return f"{name[:1].upper()}{name[1:]} ({exc.status})" + (f": {detail}" if detail else "")
    if isinstance(exc, (ImagekitError, ValueError, TypeError, OSError)):
        return str(exc) or type(exc).__name__
    log.exception("unexpected error in a widget", exc_info=exc)
    return f"Unexpected error ({type(exc).__name__}): {exc}"
