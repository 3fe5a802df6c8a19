"""Pieces the widgets share: their base class, binary traits, image loading, plain-words errors."""

from __future__ import annotations

import io
import logging
import os
import uuid
from pathlib import Path
from typing import Any

import anywidget
from traitlets import Bytes, Unicode

from ..errors import APIError, ImagekitError

log = logging.getLogger("imagekit.widgets")


class PageWidget(anywidget.AnyWidget):
    """The base of imagekit's widgets: the page can find the model by ``_model_ref`` and ask for its
    state again (``{"event": "resync"}``), which ``kernel_link.js`` does when anywidget stopped passing
    the kernel's messages on (see there)."""

    _model_ref = Unicode(help="the model's id, as the page's widget manager knows it").tag(sync=True)

    def __init__(self, **traits: Any) -> None:
        model_id = uuid.uuid4().hex  # ipywidgets opens the comm with this id, so the state can carry it
        super().__init__(model_id=model_id, _model_ref=model_id, **traits)
        self.on_msg(self._page_asked_for_state)

    def _page_asked_for_state(self, widget: Any, content: dict, buffers: Any) -> None:
        if content.get("event") == "resync":
            self.send_state([key for key in self.keys if not key.startswith("_")])


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
        hint = " (an image id: give ik.image(id))" if isinstance(image, int) and not isinstance(image, bool) else ""
        raise TypeError(f"expected an Image handle, a PIL image or a path, got {type(image).__name__}{hint}")
    try:
        picture = PILImage.open(io.BytesIO(data))
        picture.load()
    except PILImage.UnidentifiedImageError:
        raise ValueError(f"{image} is not an image imagekit can read (PNG, JPEG, WebP...)") from None
    except OSError as exc:  # an image cut short
        raise ValueError(f"{image} cannot be read as an image: {exc}") from None
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
