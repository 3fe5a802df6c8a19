"""Gallery: thumbnails of images with click-to-select; ``selected_items`` gives back what was chosen."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterable
from typing import Any

from ipywidgets import CallbackDispatcher
from PIL import Image as PILImage
from traitlets import Bool, Int, List, Unicode, observe

from ..media import thumbnail_png, to_png
from ._assets import asset_module, asset_text
from ._common import PageWidget
from .snapshot import in_rows, with_picture

__all__ = ["Gallery"]

SNAPSHOT_ACROSS, SNAPSHOT_ROWS = 8, 4
"""The static picture's grid: at most 32 thumbnails (a gallery of 1,000 in one row is past what a JPEG holds)."""


def thumbnail_url(item: Any) -> str:
    """A ``data:`` URL of a small PNG of an Image handle or a PIL image ('' when it cannot be drawn)."""
    png = item._repr_png_() if hasattr(item, "_repr_png_") else thumbnail_png(to_png(item))
    return f"data:image/png;base64,{base64.b64encode(png).decode()}" if png else ""


def caption(item: Any) -> str:
    """A short caption: ``#id`` for Image handles, the size otherwise."""
    image_id = getattr(item, "id", None)
    return f"#{image_id}" if image_id is not None else "x".join(map(str, getattr(item, "size", ())))


class Gallery(PageWidget):
    """Thumbnails of Image handles (or PIL images); click one to select or unselect it."""

    _esm = asset_module("gallery.js")
    _css = asset_text("gallery.css")

    thumbnails = List(Unicode(), help="data: URLs of the thumbnails, in order").tag(sync=True)
    captions = List(Unicode(), help="one caption per thumbnail").tag(sync=True)
    selected = List(Int(), help="indices of the selected thumbnails, in the order chosen").tag(sync=True)
    multiple = Bool(True, help="whether more than one thumbnail can be selected").tag(sync=True)

    def __init__(self, images: Iterable[Any] = (), **traits: Any) -> None:
        super().__init__(**traits)
        self.items: list[Any] = []
        """The images shown, in order."""
        self._select_callbacks = CallbackDispatcher()
        self.show(images)

    def __repr__(self) -> str:
        return f"Gallery({len(self.thumbnails)} images, {len(self.selected)} selected)"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_picture(super()._repr_mimebundle_(**kwargs), self.snapshot)

    def snapshot(self) -> PILImage.Image | None:
        """The first thumbnails in rows of eight, at most four rows (None when there are none): what views
        without widgets show."""
        urls = [url for url in self.thumbnails if url][:SNAPSHOT_ACROSS * SNAPSHOT_ROWS]
        pictures = [PILImage.open(io.BytesIO(base64.b64decode(url.partition(",")[2]))) for url in urls]
        return in_rows(pictures, min(p.height for p in pictures), SNAPSHOT_ACROSS) if pictures else None

    def show(self, images: Iterable[Any]) -> None:
        """Show ``images`` instead of what is shown now, with nothing selected."""
        self.items = list(images)
        with self.hold_sync():
            self.selected = []
            self.thumbnails = [thumbnail_url(item) for item in self.items]
            self.captions = [caption(item) for item in self.items]

    @property
    def selected_items(self) -> list[Any]:
        """The selected images."""
        return [self.items[i] for i in self.selected if 0 <= i < len(self.items)]

    @observe("selected")
    def _selection_changed(self, change: dict) -> None:
        self._select_callbacks(self.selected_items)

    def on_select(self, callback: Callable[[list[Any]], Any], remove: bool = False) -> None:
        """Call ``callback(selected_items)`` whenever the selection changes."""
        self._select_callbacks.register_callback(callback, remove=remove)
