"""The review desk in the notebook: a virtualised grid of thumbnails, keyboard first.

Arrows move, ``1``-``5`` rate, ``0`` clears, space selects, ``c`` lays the next image over the current
one with the painter's before/after divider, ``p`` votes between the current image and the
next (``←``/``→`` picks the better, ``↓`` a tie, ``Escape`` leaves), ``z`` undoes; every key has a
button with an accessible name. Each key becomes a message to the kernel, which calls the same
``Desk`` method a script would and sends the decisions back: the page keeps nothing of its own. The
kernel holds thumbnails only, never the full images.
"""

from __future__ import annotations

import base64
import io
import math
from typing import TYPE_CHECKING, Any

from PIL import Image as PILImage
from traitlets import Bool, Dict, Float, Int, List, Unicode

from ._assets import asset_module, asset_text
from ._common import PageWidget, plain_error
from .snapshot import jpeg, opaque, with_picture

if TYPE_CHECKING:
    from ..desk.desk import Desk

__all__ = ["ReviewWidget"]

_SNAPSHOT_TILE = 96
"""Pixels of a thumbnail in the static picture."""
_SNAPSHOT_COLUMNS = 6
THUMB = 128
"""Pixels of a grid thumbnail's longer side: a JPEG of a few kB, so 1,000 of them stay a few MB."""


def thumbnail_url(image: Any) -> str:
    """A ``data:`` URL of a small JPEG of an Image handle ('' when it cannot be drawn): made from the
    handle's own display thumbnail, so the kernel never keeps the full image."""
    png = image._repr_png_()
    if not png:
        return ""
    with PILImage.open(io.BytesIO(png)) as picture:
        small = opaque(picture)
        small.thumbnail((THUMB, THUMB))
    return f"data:image/jpeg;base64,{base64.b64encode(jpeg(small)).decode()}"


class ReviewWidget(PageWidget):
    """A desk's images as a grid to rate, select and vote on; built by ``Desk.widget()``."""

    _esm = asset_module("review.js")
    _css = asset_text("review.css")

    thumbnails = List(Unicode(), help="data: URLs of the thumbnails, in the desk's order").tag(sync=True)
    ids = List(Int(), help="the image ids, in the desk's order").tag(sync=True)
    prompts = List(Unicode(), help="each image's prompt ('' when unknown)").tag(sync=True)
    styles = List(Unicode(), help="each image's style ('' when unknown)").tag(sync=True)
    costs: List = List(help="each image's credits (null when unknown)").tag(sync=True)
    ratings = Dict(help="image id (as text) -> stars, for the rated images").tag(sync=True)
    scores = Dict(help="image id (as text) -> Bradley–Terry score").tag(sync=True)
    selected = List(Int(), help="the selected image ids, in the order chosen").tag(sync=True)
    votes = Int(0, help="votes standing").tag(sync=True)
    message = Unicode("", help="the last mistake, in one line ('' when none)").tag(sync=True)
    compare = Bool(False, help="whether the next image is laid over the current one, right of a divider").tag(sync=True)
    divider = Float(0.5, help="where the comparison's divider stands, 0 (left) to 1 (right)").tag(sync=True)
    row_height = Float(150.0, help="pixels of one row of the grid (for its virtual scrolling)").tag(sync=True)

    def __init__(self, desk: Desk, **traits: Any) -> None:
        super().__init__(**traits)
        self.desk = desk
        """The desk whose methods every key calls."""
        frame = desk.decisions()
        with self.hold_sync():
            self.ids = [item.id for item in desk.items]
            self.thumbnails = [thumbnail_url(item.image) for item in desk.items]
            self.prompts = ["" if item.prompt is None else str(item.prompt) for item in desk.items]
            self.styles = ["" if item.style is None else str(item.style) for item in desk.items]
            self.costs = [None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
                          for value in frame["credits"]]
            self._show(frame)
        self.on_msg(self._page_said)

    def __repr__(self) -> str:
        return f"ReviewWidget({len(self.ids)} images, {len(self.ratings)} rated, {len(self.selected)} selected)"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_picture(super()._repr_mimebundle_(**kwargs), self.snapshot)

    def snapshot(self) -> PILImage.Image | None:
        """The grid with each image's stars and selection drawn under it: what views without widgets show."""
        from PIL import ImageDraw

        shown = [(url, image) for url, image in zip(self.thumbnails, self.ids) if url][:_SNAPSHOT_COLUMNS * 4]
        if not shown:
            return None
        columns = min(_SNAPSHOT_COLUMNS, len(shown))
        rows = math.ceil(len(shown) / columns)
        tile, label = _SNAPSHOT_TILE, 18
        sheet = PILImage.new("RGB", (columns * (tile + 8), rows * (tile + label + 8)), "white")
        draw = ImageDraw.Draw(sheet)
        for n, (url, image) in enumerate(shown):
            left, top = (n % columns) * (tile + 8), (n // columns) * (tile + label + 8)
            with PILImage.open(io.BytesIO(base64.b64decode(url.partition(",")[2]))) as opened:
                thumb = opened.convert("RGB")
            thumb.thumbnail((tile, tile))
            sheet.paste(thumb, (left, top))
            if image in self.selected:
                draw.rectangle((left, top, left + tile - 1, top + tile - 1), outline=(25, 118, 210), width=3)
            stars = int(self.ratings.get(str(image), 0))
            draw.text((left, top + tile + 2), "*" * stars + "-" * (5 - stars) + (" picked" if image in self.selected else ""),
                      fill="black")
        return sheet

    def _show(self, frame: Any = None) -> None:
        """Send the desk's decisions to the page."""
        frame = self.desk.decisions() if frame is None else frame
        state = self.desk._state
        with self.hold_sync():
            self.ratings = {str(image): stars for image, stars in state.ratings.items()}
            self.scores = {str(image): round(float(score), 4) for image, score in zip(frame["image_id"], frame["score"])}
            self.selected = list(state.selected)
            self.votes = len(state.votes)

    def _page_said(self, widget: Any, content: dict, buffers: Any) -> None:
        """A key or a click on the page: the same Desk method a script calls."""
        event = content.get("event")
        if event not in ("rate", "select", "unselect", "vote", "undo"):
            return
        try:
            if event == "rate":
                self.desk.rate(int(content["image"]), int(content["stars"]))
            elif event in ("select", "unselect"):
                getattr(self.desk, event)(int(content["image"]))
            elif event == "vote":
                self.desk.vote(int(content["winner"]), int(content["loser"]), tie=bool(content.get("tie")))
            else:
                self.desk.undo()
            self.message = ""
        except Exception as exc:  # noqa: BLE001 - the page shows it in one line; the desk recorded nothing
            self.message = plain_error(exc)
        self._show()
