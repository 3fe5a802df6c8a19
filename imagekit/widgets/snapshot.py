"""Pictures of the widgets for where no widget runs: GitHub, nbviewer, nbconvert's HTML, a notebook
saved without widget state. Each widget puts its picture in its mime bundle beside the live view, so a
front end with a widget manager shows the widget and any other shows the picture (never as
``_repr_html_``, which marimo would show instead of the widget).
"""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Callable, Sequence
from typing import Any

from PIL import Image as PILImage

log = logging.getLogger("imagekit.widgets")

QUALITY = 85
"""JPEG quality of the pictures: a 640 px painter is about 30 kB, a twentieth of its PNG."""
GAP = 8
"""Pixels of white between the pictures laid side by side."""


def opaque(picture: PILImage.Image) -> PILImage.Image:
    """The picture in RGB, anything transparent (a cut-out's background) on white, as the widgets show it."""
    if picture.mode in ("RGBA", "LA", "PA") or (picture.mode == "P" and "transparency" in picture.info):
        rgba = picture.convert("RGBA")
        sheet = PILImage.new("RGB", rgba.size, "white")
        sheet.paste(rgba, mask=rgba.getchannel("A"))
        return sheet
    return picture if picture.mode == "RGB" else picture.convert("RGB")


def scaled(picture: PILImage.Image, size: tuple[int, int]) -> PILImage.Image:
    """The picture at ``size``: first shrunk by a whole factor (fast; an 8192 px image in a tenth of the
    time a filter over all its pixels takes), then filtered to the exact size."""
    factor = max(1, min(picture.width // size[0], picture.height // size[1]))
    return (picture.reduce(factor) if factor > 1 else picture).resize(size, PILImage.Resampling.LANCZOS)


def side_by_side(pictures: Sequence[PILImage.Image], height: int) -> PILImage.Image:
    """``pictures`` scaled to ``height`` and laid left to right on white."""
    shown = [scaled(opaque(picture), (max(1, round(picture.width * height / picture.height)), height))
             for picture in pictures]
    sheet = PILImage.new("RGB", (sum(p.width for p in shown) + GAP * (len(shown) - 1), height), "white")
    left = 0
    for picture in shown:
        sheet.paste(picture, (left, 0))
        left += picture.width + GAP
    return sheet


def in_rows(pictures: Sequence[PILImage.Image], height: int, across: int) -> PILImage.Image:
    """``pictures`` scaled to ``height``, ``across`` to a row, the rows one under another on white."""
    rows = [side_by_side(pictures[start:start + across], height) for start in range(0, len(pictures), across)]
    sheet = PILImage.new("RGB", (max(row.width for row in rows), sum(row.height for row in rows) + GAP * (len(rows) - 1)),
                         "white")
    for n, row in enumerate(rows):
        sheet.paste(row, (0, n * (height + GAP)))
    return sheet


def checkered(size: tuple[int, int], square: int = 12) -> PILImage.Image:
    """A light checkerboard of ``size``, as the widgets show a canvas's new area."""
    sheet = PILImage.new("RGB", size, (255, 255, 255))
    grey = PILImage.new("RGB", (square, square), (222, 222, 222))
    for top in range(0, size[1], square):
        for left in range((top // square) % 2 * square, size[0], 2 * square):
            sheet.paste(grey, (left, top))
    return sheet


def jpeg(picture: PILImage.Image) -> bytes:
    """The picture as JPEG bytes."""
    out = io.BytesIO()
    picture.convert("RGB").save(out, format="JPEG", quality=QUALITY, optimize=True)
    return out.getvalue()


def with_picture(bundle: Any, draw: Callable[[], PILImage.Image | None]) -> Any:
    """A widget's mime bundle (a dict, or anywidget's (data, metadata)) with ``draw()``'s picture added
    as ``image/jpeg``; without it when there is nothing to draw or drawing or encoding fails (display
    never raises)."""
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    try:
        picture = draw()
        if picture is not None and data is not None:
            data["image/jpeg"] = base64.b64encode(jpeg(picture)).decode("ascii")
    except Exception as exc:  # noqa: BLE001 - the live widget and the text repr still show
        log.debug("no picture for a widget's static view: %s", exc)
    return bundle
