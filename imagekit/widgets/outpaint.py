"""Outpainting from a widget: frame a larger canvas around the image by dragging its edges or corners,
typing sizes or picking a ratio, see the cost, and run it. ``OutpaintFramer`` does only that;
``MaskPainter`` has the same frame as its outpaint mode (both share ``Outpainting``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PIL import Image as PILImage
from traitlets import Int, List, Unicode, observe

from . import framing
from ._assets import asset_module, asset_text
from ._editing import EditingWidget, credits_text
from .snapshot import checkered, scaled

__all__ = ["OutpaintFramer"]


def _pair(help: str) -> List:
    return List(Int(), [0, 0], minlen=2, maxlen=2, help=help).tag(sync=True)


class Outpainting(EditingWidget):
    """An editing widget with an outpaint frame: ``canvas``, ``location`` and ``size`` (the request's
    canvasSize, originalImageLocation and originalImageSize), its price and an Outpaint button."""

    canvas = _pair("the new canvas's [width, height] in pixels: canvasSize")
    location = _pair("the original's [x, y] on the canvas, negative where it sticks out: originalImageLocation")
    size = _pair("the original's [width, height] on the canvas: originalImageSize")
    frame_problem = Unicode("", help="why the service would refuse the frame, in plain words ('' when fine)").tag(sync=True)
    outpaint_price = Unicode("", help="what Outpaint costs: the plan's outpaint price ('' when unknown)").tag(sync=True)

    def __init__(self, image: Any, **traits: Any) -> None:
        super().__init__(image, **traits)
        self.reset_frame()
        self._reprice()

    @property
    def frame(self) -> framing.Frame:
        """The current frame, checked (ValueError says why the service would refuse it)."""
        return framing.check(self.canvas, self.location, self.size)

    def reset_frame(self) -> None:
        """A frame that adds nothing: the canvas is the image."""
        self._show_frame(framing.start((self.width, self.height)))

    def extend(self, left: int = 0, top: int = 0, right: int = 0, bottom: int = 0) -> None:
        """Move the canvas's edges outward by so many pixels (negative: inward), within the limits."""
        self._show_frame(framing.extend(self.frame, left, top, right, bottom))

    def use_ratio(self, ratio: str) -> None:
        """Widen or heighten the canvas, about its centre, to ``ratio`` ("16:9")."""
        self._show_frame(framing.with_ratio(self.frame, ratio))

    def _show_frame(self, frame: framing.Frame) -> None:
        with self.hold_sync():
            self.canvas, self.location, self.size = (list(pair) for pair in frame)

    @observe("canvas", "location", "size")
    def _check_frame(self, change: dict) -> None:
        self.frame_problem = framing.problem(self.canvas, self.location, self.size)

    def _drawn(self, picture: PILImage.Image) -> PILImage.Image:
        return self._framed(super()._drawn(picture))

    def _framed(self, picture: PILImage.Image) -> PILImage.Image:
        """``picture`` (the image as shown) placed on the frame's canvas, the new area checkered, the
        canvas at most ``max_view`` wide; the picture alone while the frame adds nothing (or is one
        the service would refuse)."""
        try:
            frame = self.frame
        except ValueError:
            return picture
        if frame == framing.start((self.width, self.height)):
            return picture
        (width, height), (x, y), (placed_width, placed_height) = frame
        fit = min(picture.width / self.width, self.max_view / width)
        canvas = checkered((max(1, round(width * fit)), max(1, round(height * fit))))
        placed = scaled(picture, (max(1, round(placed_width * fit)), max(1, round(placed_height * fit))))
        canvas.paste(placed, (round(x * fit), round(y * fit)))  # clipped where it sticks out
        return canvas

    def _reprice(self) -> None:
        self.outpaint_price = credits_text(self._prices("outpaint")["outpaint"])

    def outpaint(self, canvas: Sequence[int], location: Sequence[int] = (0, 0),
                 size: Sequence[int] | None = None, **options: Any) -> Any:
        """Expand the image to a ``canvas`` (w, h), its top-left at ``location`` (x, y, negative where it
        sticks out), drawn at ``size`` (default: its own); returns the new Image and shows it.
        A frame the service would refuse raises ValueError before any request."""
        frame = framing.check(canvas, location, size or (self.width, self.height))
        self._show_frame(frame)
        return self._edit("Outpainting", lambda image: image.outpaint(
            canvas=frame.canvas, size=frame.size, at=frame.location, **options))

    def _now_showing(self, size: tuple[int, int]) -> None:
        super()._now_showing(size)
        self.reset_frame()

    def _browser_asked(self, widget: Any, content: dict, buffers: Any) -> None:
        event = content.get("event")
        if event == "edit" and content.get("op") == "outpaint" and not self.busy:
            self.run_in_background(lambda: self.outpaint(self.canvas, self.location, self.size))
        elif event == "extend":
            self.extend(*(int(content.get(side, 0)) for side in ("left", "top", "right", "bottom")))
        elif event == "ratio":
            self.use_ratio(str(content.get("ratio", "")))
        else:
            super()._browser_asked(widget, content, buffers)


class OutpaintFramer(Outpainting):
    """Frame an outpaint of an image (Image handle; a PIL image or path can be framed, not run): drag
    the canvas's edges or corners, type the sizes or pick a ratio; the new area shows checkered with
    the cost. ``canvas``, ``location`` and ``size`` hold the frame; Outpaint (or ``outpaint()``) runs it
    and shows the result beside the original, and ``continue_on_result()`` frames the result next."""

    _esm = asset_module("outpaint_framer.js")
    _css = asset_text("mask_painter.css")

    def __repr__(self) -> str:
        return (f"OutpaintFramer({self.width}x{self.height}, canvas={tuple(self.canvas)}, "
                f"location={tuple(self.location)}, size={tuple(self.size)})")
