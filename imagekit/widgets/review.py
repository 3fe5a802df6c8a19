"""The review desk in the notebook: a virtualised grid of thumbnails, keyboard first.

Arrows move, ``1``-``5`` rate, ``0`` clears, space selects, ``c`` lays the next image over the current
one with the painter's before/after divider, ``p`` votes between the current image and the
next (``←``/``→`` picks the better, ``↓`` a tie, ``Escape`` leaves), ``z`` undoes; every key has a
button with an accessible name. The bar sorts by the decisions, the prompt, style and cost, and by the
quality signals (measured when first asked for: ``Desk.quality``), whose near-duplicates and blurred
images the thumbnails flag. With a next step (``Desk.send(chain)``) it shows that step's price for the
picks as they change, and a Send button that confirms it. Each key becomes a message to the kernel, which calls the same
``Desk`` method a script would and sends the decisions back: the page keeps nothing of its own (a
rating or selection is drawn at once, marked pending, until the kernel's ``answered`` says it was
carried out or refused). The kernel holds thumbnails only, never the full images.
"""

from __future__ import annotations

import base64
import io
import itertools
import math
from typing import TYPE_CHECKING, Any, cast

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
_FIRST_SCREEN = 60
"""Thumbnails sent with the widget: a screenful and the next (6 columns of 5 rows), so the page opens
with pictures rather than asking for them first."""
_DRAWN_AT_ONCE = 300
"""Thumbnails one message from the page may ask for (a screenful is some 40; the page asks again)."""
_SNAPSHOT_COLUMNS = 6
_SNAPSHOT_TILES = _SNAPSHOT_COLUMNS * 4
"""Thumbnails in the static picture: the first four rows."""
THUMB = 128
"""Pixels of a grid thumbnail's longer side: a JPEG of a few kB, so 1,000 of them stay a few MB."""


def thumbnail_url(image: Any, file: str | None = None) -> str:
    """A ``data:`` URL of a small JPEG of an image ('' when it cannot be drawn): from ``file`` (the
    one imagekit saved it to) when Pillow reads it, else the handle's own display thumbnail, so the
    kernel never keeps the full image."""
    from PIL import UnidentifiedImageError

    try:
        with PILImage.open(file or io.BytesIO(image._repr_png_() or b"")) as picture:
            small = opaque(picture)
            small.thumbnail((THUMB, THUMB))
            data = jpeg(small)
    except (UnidentifiedImageError, OSError):
        return thumbnail_url(image) if file else ""  # an SVG, a file gone: the handle's thumbnail
    return f"data:image/jpeg;base64,{base64.b64encode(data).decode()}"


class ReviewWidget(PageWidget):
    """A desk's images as a grid to rate, select and vote on; built by ``Desk.widget()``."""

    _esm = asset_module("review.js")
    _css = asset_text("review.css")

    drawn = Dict(help="the last batch of thumbnails a page asked for: batch (its number, so a batch asked for "
                      "again is sent again) and urls (desk index as text -> data: URL, '' when the image cannot be "
                      "drawn); each page keeps what it was sent").tag(sync=True)
    ids = List(Int(), help="the image ids, in the desk's order").tag(sync=True)
    prompts = List(Unicode(), help="each image's prompt ('' when unknown)").tag(sync=True)
    styles = List(Unicode(), help="each image's style ('' when unknown)").tag(sync=True)
    costs: List = List(help="each image's credits (null when unknown)").tag(sync=True)
    ratings = Dict(help="image id (as text) -> stars, for the rated images").tag(sync=True)
    scores = Dict(help="image id (as text) -> Bradley–Terry score").tag(sync=True)
    selected = List(Int(), help="the selected image ids, in the order chosen").tag(sync=True)
    votes = Int(0, help="votes standing").tag(sync=True)
    answered = Int(0, help="the number (seq) of the page's last decision the kernel has carried out or refused: "
                           "the page draws a rating or selection at once, pending, until this reaches it").tag(sync=True)
    message = Unicode("", help="the last mistake, in one line ('' when none)").tag(sync=True)
    compare = Bool(False, help="whether the next image is laid over the current one, right of a divider").tag(sync=True)
    divider = Float(0.5, help="where the comparison's divider stands, 0 (left) to 1 (right)").tag(sync=True)
    row_height = Float(150.0, help="pixels of one row of the grid (for its virtual scrolling)").tag(sync=True)
    signals = Dict(help="the quality signals, in the desk's order: sharpness, noise, dup_of (an image id or "
                        "null), blurred (true or false); empty until measured").tag(sync=True)
    quote = Dict(help="the next step's price for the picks: text, picks, credits, after (the balance after) "
                      "and ok (whether it may be sent); empty without a next step").tag(sync=True)

    def __init__(self, desk: Desk, **traits: Any) -> None:
        super().__init__(**traits)
        self.desk = desk
        """The desk whose methods every key calls."""
        self._scored: list[tuple[int, int, bool]] = []
        """The votes the scores the page holds were fitted to."""
        self.sent: Desk | None = None
        """The desk of the images the page's Send made (each remembering its parent)."""
        self._thumbnails: list[str | None] = [None] * len(desk.items)
        """Each image's thumbnail once drawn: drawn when the page shows its row (or a script asks), so a
        desk of 1,000 opens as fast as one of a screenful."""
        frame = desk.decisions()
        with self.hold_sync():
            self.ids = [item.id for item in desk.items]
            self.prompts = ["" if item.prompt is None else str(item.prompt) for item in desk.items]
            self.styles = ["" if item.style is None else str(item.style) for item in desk.items]
            self.costs = [None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
                          for value in frame["credits"]]
            self._show(frame)
            self._show_quality()
            self._draw_thumbnails(list(range(min(len(self.ids), _FIRST_SCREEN))))  # shown without asking first
        self._show_quote()
        self.on_msg(self._page_said)

    def __repr__(self) -> str:
        return f"ReviewWidget({len(self.ids)} images, {len(self.ratings)} rated, {len(self.selected)} selected)"

    def thumbnail(self, index: int) -> str:
        """The ``data:`` URL of the thumbnail of the desk's image at ``index`` ('' when it cannot be
        drawn), drawn on first use."""
        if not -len(self._thumbnails) <= index < len(self._thumbnails):
            raise IndexError(f"the desk holds {len(self._thumbnails)} images: there is no image {index}")
        drawn = self._thumbnails[index]
        if drawn is None:
            item = self.desk.items[index]
            drawn = self._thumbnails[index] = thumbnail_url(item.image, item.file)
        return drawn

    @property
    def thumbnails(self) -> list[str]:
        """Every thumbnail, in the desk's order (each drawn now if the page has not shown it)."""
        return [self.thumbnail(index) for index in range(len(self.ids))]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_picture(super()._repr_mimebundle_(**kwargs), self.snapshot)

    def snapshot(self) -> PILImage.Image | None:
        """The grid with each image's stars and selection drawn under it: what views without widgets show."""
        from PIL import ImageDraw

        drawable = ((url, image) for url, image in ((self.thumbnail(n), image) for n, image in enumerate(self.ids)) if url)
        shown = list(itertools.islice(drawable, _SNAPSHOT_TILES))  # (drawing only the ones it shows)
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

    def _show(self, frame: Any = None) -> None:  # (the desk calls it after every decision)
        """Send the desk's decisions to the page (the log read again; the scores fitted again only when
        the votes changed: a rating on a desk of 1,000 is a key press waiting for this)."""
        from ..decisions.ranking import scores_of

        state = self.desk.refresh() if frame is None else self.desk._state
        if frame is not None:
            scores = dict(zip(frame["image_id"], frame["score"]))
        elif state.votes != self._scored:
            scores = scores_of(self.ids, state.votes)
        else:
            scores = None
        self._scored = list(state.votes)
        before = list(self.selected)
        with self.hold_sync():
            self.ratings = {str(image): stars for image, stars in state.ratings.items()}
            if scores is not None:
                self.scores = {str(image): round(float(score), 4) for image, score in scores.items()}
            self.selected = list(state.selected)
            self.votes = len(state.votes)
        if self.selected != before and self.quote:  # the picks changed: so did their price (sent after them)
            self._show_quote()

    def _show_quality(self) -> None:
        """Send the quality signals the desk measured (none until ``Desk.quality``) to the page."""
        frame = self.desk._quality
        if frame is None:
            return
        import pandas as pd

        dup = frame["dup_of"]
        self.signals = {"sharpness": [round(float(v), 2) for v in frame["sharpness"]],
                        "noise": [round(float(v), 2) for v in frame["noise"]],
                        "dup_of": [None if pd.isna(v) else int(v) for v in dup],
                        "blurred": [bool(v) for v in frame["blurred"]]}

    def _priced(self) -> Any:
        """The next step's quote now (``send.quote``, as Python gives it), or the one line refusing it."""
        try:
            return self.desk.quote()
        except Exception as exc:  # noqa: BLE001 - shown in one line where the price would be
            return plain_error(exc)

    def _show_quote(self) -> None:
        """Send the next step's price for the picks as they are now to the page."""
        if self.desk.next_step is None:
            return
        priced = self._priced()
        self.quote = ({"text": priced, "picks": len(self.selected), "credits": None, "after": None, "ok": False}
                      if isinstance(priced, str) else
                      {"text": priced.summary, "picks": priced.picks, "credits": priced.credits,
                       "after": priced.balance_after, "ok": True})

    def _sent_on(self, content: dict) -> str:
        """The page's Send: run the next step on the picks when its price is still the one shown."""
        priced = self._priced()
        if isinstance(priced, str):
            return priced
        if (priced.picks, priced.credits) != (content.get("picks"), content.get("credits")):
            self._show_quote()
            return (f"the price changed since it was shown ({content.get('credits')} credits for {content.get('picks')}, "
                    f"now {priced.credits:g} for {priced.picks}): look at it again; nothing was sent")
        assert self.desk.next_step is not None  # (priced: there is one)
        chain, budget = self.desk.next_step
        results = cast("Desk", self.desk.send(chain, confirm=True, budget=budget))
        self.sent = results
        made = len(results.items)
        return (f"sent: {made} image{'' if made == 1 else 's'} made for {priced.credits:g} credits; "
                "the widget's sent holds their desk")

    def _page_said(self, widget: Any, content: dict, buffers: Any) -> None:
        """A key or a click on the page: the same Desk method a script calls."""
        event = content.get("event")
        if event == "thumbnails":
            self._draw_thumbnails(content.get("indexes"))
            return
        if event not in ("rate", "select", "unselect", "vote", "undo", "measure", "send"):
            return
        try:
            if event == "rate":
                self.desk.rate(int(content["image"]), int(content["stars"]))
            elif event in ("select", "unselect"):
                getattr(self.desk, event)(int(content["image"]))
            elif event == "vote":
                self.desk.vote(int(content["winner"]), int(content["loser"]), tie=bool(content.get("tie")))
            elif event == "measure":
                self.desk.quality()
            elif event == "undo":
                self.desk.undo()
            self.message = self._sent_on(content) if event == "send" else ""
        except Exception as exc:  # noqa: BLE001 - the page shows it in one line; the desk recorded nothing
            self.message = plain_error(exc)
            self._show()
        if event == "send":
            self._show_quote()
        seq = content.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            self.answered = seq  # after the decisions it changed: the page drops what it drew pending

    def _draw_thumbnails(self, indexes: Any) -> None:
        """The thumbnails of the rows the page shows (``indexes``: the desk's, at most ``_DRAWN_AT_ONCE``;
        anything else in the message is ignored), sent in one ``drawn`` batch."""
        if not isinstance(indexes, list):
            return
        wanted = [n for n in indexes if isinstance(n, int) and not isinstance(n, bool) and 0 <= n < len(self.ids)]
        urls = {str(n): self.thumbnail(n) for n in dict.fromkeys(wanted[:_DRAWN_AT_ONCE])}
        self.drawn = {"batch": int(self.drawn.get("batch", 0)) + 1, "urls": urls}
