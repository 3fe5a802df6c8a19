"""MaskPainter: paint a mask over an image in the browser, read it in Python, fill or clean up with it.

The browser paints on a canvas at the image's own resolution and sends the mask once per finished
change as a 1-bit PNG (``mask_png``, white = painted). Undo and redo live in the browser. The widget's
own Fill, Clean up and Outpaint buttons run the edit on a worker thread, so the kernel stays free meanwhile.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from ipywidgets import CallbackDispatcher
from PIL import Image as PILImage
from traitlets import Bool, Enum, Float, Int, TraitError, Unicode, validate

from . import mask_ops
from ._assets import asset_module, asset_text
from ._common import binary_trait, plain_error
from ._editing import credits_text
from .outpaint import Outpainting
from .snapshot import scaled

__all__ = ["MaskPainter"]


class MaskPainter(Outpainting):
    """Paint a mask over an image (Image handle, PIL image or path) with brush, eraser, undo and redo.

    ``mask`` is the mask as a PIL "L" image (255 = painted) at the image's size (settable from any
    image or array, ``save_mask(path)`` writes it), ``mask_array()`` the same as a boolean array;
    ``grow``, ``shrink`` and ``smooth`` (or their buttons) change it by a number of image pixels, and
    ``select_box`` and ``select_polygon`` (or the Box and Lasso tools) add or take away a shape, and
    ``select_subject`` (the Subject button) the subject the service's background removal finds; ``fill()`` and ``clean_up()`` (or the widget's own buttons) edit the image
    with it (Image handles only) and show the result beside the original; ``continue_on_result()`` (or
    its button) paints on the result next. The outpaint mode (``mode="outpaint"``, key O) frames a
    larger canvas as ``OutpaintFramer`` does; ``outpaint(canvas, location)`` runs it. ``snapshot()`` is
    the image with its mask (and the result) as a picture: what views without widgets show.
    """

    _esm = asset_module("mask_painter.js")
    _css = asset_text("mask_painter.css")

    mask_png = binary_trait("the mask as a PNG: 1-bit white = painted, or alpha = painted (b'' = nothing)")
    revision = Int(0, help="bumped by whichever side changed mask_png, so a side skips its own echo").tag(sync=True)
    received = Int(0, help="the last mask revision the kernel decoded; the browser times syncs by it").tag(sync=True)
    tool = Enum(("brush", "eraser"), "brush", help="what a drag does: brush paints, eraser unpaints").tag(sync=True)
    shape = Enum(("stroke", "box", "lasso"), "stroke",
                 help="what a drag draws: a brush stroke, a box, or a lasso (freehand or clicked points)").tag(sync=True)
    brush_size = Int(24, help="brush diameter in image pixels (at least 1)").tag(sync=True)
    opacity = Float(0.5, min=0.0, max=1.0, help="opacity of the mask overlay").tag(sync=True)
    mask_color = Unicode("#ff2a5a", help="colour of the mask overlay, #rrggbb").tag(sync=True)
    mode = Enum(("mask", "outpaint"), "mask", help="mask: paint and select; outpaint: frame a larger canvas").tag(sync=True)
    compare = Bool(False, help="show the result over the original, split by a divider (needs a result)").tag(sync=True)
    divider = Float(0.5, min=0.0, max=1.0, help="where the divider stands, as a fraction of the image's width: "
                    "the original shows left of it, the result right").tag(sync=True)
    subject_price = Unicode("", help="what Subject costs now: the plan's removeBg price, 'free' once the "
                            "image's cut-out is kept, '' when unknown").tag(sync=True)

    def __init__(self, image: Any, *, brush_size: int | None = None, **traits: Any) -> None:
        self._cutouts: dict[int, Any] = {}  # image id -> its removeBg result, so Subject is paid once an image
        self._mask_callbacks = CallbackDispatcher()
        if brush_size is not None and (isinstance(brush_size, bool) or not isinstance(brush_size, int)
                                       or brush_size < 1):
            raise ValueError(f"brush_size is the brush's diameter in image pixels, at least 1, not {brush_size!r}")
        super().__init__(image, **traits)
        self.brush_size = brush_size or max(4, round(max(self.width, self.height) / 32))
        self.observe(self._mask_arrived, "mask_png")

    def __repr__(self) -> str:
        return f"MaskPainter({self.width}x{self.height}, painted={self.mask_array().mean():.1%}, tool={self.tool!r})"

    @validate("brush_size")
    def _clip_brush(self, proposal: Any) -> int:
        return max(1, int(proposal["value"]))

    @validate("mask_color")
    def _check_colour(self, proposal: Any) -> str:
        if not re.fullmatch(r"#[0-9a-fA-F]{6}", proposal["value"]):
            raise TraitError(f"mask_color must look like #rrggbb, got {proposal['value']!r}")
        return proposal["value"].lower()

    # -- the mask --------------------------------------------------------------------------------
    @property
    def mask(self) -> PILImage.Image:
        """The mask as a PIL "L" image at the image's size: 255 where painted, else 0."""
        if not self.mask_png:
            return PILImage.new("L", (self.width, self.height), 0)
        picture = PILImage.open(io.BytesIO(self.mask_png))
        values = picture.getchannel("A") if "A" in picture.getbands() else picture.convert("L")
        if values.size != (self.width, self.height):
            values = values.resize((self.width, self.height), PILImage.Resampling.NEAREST)
        return values.point(lambda v: 255 if v >= 128 else 0)  # strokes are antialiased

    @mask.setter
    def mask(self, value: Any) -> None:
        """Replace the mask (the browser can undo it): a PIL image or array of any mode, thresholded
        at half its range (alpha where there is one), or None to clear; another size is refused."""
        out = io.BytesIO()
        PILImage.fromarray(mask_ops.to_bits(value, (self.width, self.height))).save(out, format="PNG")  # 1-bit
        with self.hold_sync():
            self.revision += 1
            self.mask_png = out.getvalue()

    def save_mask(self, path: str | os.PathLike[str]) -> Path:
        """Save the mask as an image file (255 = painted; the format follows the name, PNG is exact)."""
        path = Path(path)
        self.mask.save(path)
        return path

    def mask_array(self) -> np.ndarray:
        """The mask as a boolean array of shape (height, width)."""
        return np.asarray(self.mask) > 0

    def clear(self) -> None:
        """Unpaint everything (the browser can undo it)."""
        self.mask = None

    def invert(self) -> None:
        """Swap painted and unpainted (the browser can undo it)."""
        self.mask = ~self.mask_array()

    def grow(self, px: int) -> None:
        """Grow the painted area by ``px`` image pixels on every side (one undo step in the browser)."""
        self.mask = mask_ops.grow(self.mask_array(), px)

    def shrink(self, px: int) -> None:
        """Shrink the painted area by ``px`` image pixels (paint on the image's edge stays; one undo step)."""
        self.mask = mask_ops.shrink(self.mask_array(), px)

    def smooth(self, px: int) -> None:
        """Remove specks and close gaps narrower than ``px`` image pixels, rounding corners (one undo step)."""
        self.mask = mask_ops.smooth(self.mask_array(), px)

    def select_box(self, box: tuple[float, float, float, float], subtract: bool = False) -> None:
        """Add the box (left, top, right, bottom; image pixels, right and bottom exclusive) to the mask,
        or take it away with ``subtract`` (one undo step)."""
        bits = mask_ops.box((self.width, self.height), box)
        if not bits.any():  # a box off the image, or turned inside out: a mistake, not a selection
            raise ValueError(f"the box {tuple(box)} holds no pixel of the {self.width}x{self.height} image "
                             "(left, top, right, bottom; right and bottom exclusive)")
        self._select(bits, subtract)

    def select_polygon(self, points: Any, subtract: bool = False) -> None:
        """Add the polygon [(x, y), ...] (image pixels) to the mask, or take it away (one undo step)."""
        self._select(mask_ops.polygon((self.width, self.height), points), subtract)

    def _select(self, shape: np.ndarray, subtract: bool) -> None:
        self.mask = self.mask_array() & ~shape if subtract else self.mask_array() | shape

    def select_subject(self, subtract: bool = False) -> None:
        """Add the image's subject to the mask (or take it away): the alpha of the service's own
        background removal, paid as removeBg once an image (the cut-out is kept for the next time)."""
        if self.source is None:
            raise ValueError("Subject needs an image on the service: make the painter from an Image handle")
        source = self.source
        self.status, self.busy = "Finding the subject…", True
        try:
            if source.id not in self._cutouts:
                self._cutouts[source.id] = source.remove_bg()
            cutout = PILImage.open(io.BytesIO(self._cutouts[source.id].read("png")))
            subject = mask_ops.to_bits(cutout.convert("RGBA").getchannel("A"), (self.width, self.height))
            self._select(subject, subtract)
        except Exception as exc:
            self.status = plain_error(exc)
            raise
        finally:
            self.busy = False
        self.status = ""
        self._reprice()

    def _reprice(self) -> None:
        """Show what Subject and Outpaint cost before they are clicked (Subject is free for a kept cut-out)."""
        kept = self.source is not None and self.source.id in self._cutouts
        prices = self._prices("outpaint") if kept else self._prices("outpaint", "removeBg")
        self.outpaint_price = credits_text(prices["outpaint"])
        self.subject_price = "free" if kept else credits_text(prices["removeBg"])

    def _drawn(self, picture: PILImage.Image) -> PILImage.Image:
        """The mask over the picture, in its colour and opacity, as the painter shows it; in the
        outpaint mode, the image on its new canvas instead."""
        if self.mode == "outpaint":
            return self._framed(picture)
        if not self.mask_png:
            return picture
        alpha = scaled(self.mask, picture.size).point(lambda v: round(v * self.opacity))
        return PILImage.composite(PILImage.new("RGB", picture.size, self.mask_color), picture, alpha)

    def _mask_arrived(self, change: dict) -> None:
        self.received = self.revision
        self._mask_callbacks(self)

    # -- edits -----------------------------------------------------------------------------------
    def fill(self, prompt: str, negative: str = "", **options: Any) -> Any:
        """Regenerate the painted area from ``prompt``; returns the new Image and shows it."""
        return self._edit("Filling", lambda image: image.fill(self._painted_mask("fill"), prompt, negative, **options))

    def clean_up(self, **options: Any) -> Any:
        """Remove what is painted; returns the new Image and shows it."""
        return self._edit("Cleaning up", lambda image: image.clean_up(self._painted_mask("clean up"), **options))

    def _painted_mask(self, doing: str) -> PILImage.Image:
        """The mask, refused before anything is sent (or charged) when nothing is painted."""
        if not self.mask_array().any():
            raise ValueError(f"The mask is empty: paint what to {doing} first (or set it in code: "
                             "painter.select_box((x0, y0, x1, y1))).")
        return self.mask

    def _now_showing(self, size: tuple[int, int]) -> None:
        # The mask and its undo history stay for a result of the same size; one of another size (an
        # outpaint's) starts with an empty mask, as one of the old size would not fit.
        if size != (self.width, self.height):
            super()._now_showing(size)
            self.mask = None
        else:
            self.reset_frame()

    def _browser_asked(self, widget: Any, content: dict, buffers: Any) -> None:
        """The widget's buttons: edits run on a worker thread, so the kernel keeps taking strokes."""
        event = content.get("event")
        if event == "edit" and content.get("op") in ("fill", "clean_up") and not self.busy:
            if content["op"] == "fill":
                self.run_in_background(self.fill, content.get("prompt", ""), content.get("negative", ""))
            else:
                self.run_in_background(self.clean_up)
        elif event == "morph" and content.get("op") in ("grow", "shrink", "smooth"):
            getattr(self, content["op"])(int(content.get("px", 0)))
        elif event == "subject" and not self.busy:
            self.run_in_background(self.select_subject, bool(content.get("subtract")))
        else:
            super()._browser_asked(widget, content, buffers)

    def on_mask(self, callback: Callable[[MaskPainter], Any], remove: bool = False) -> None:
        """Call ``callback(painter)`` each time the mask changes (once per finished stroke)."""
        self._mask_callbacks.register_callback(callback, remove=remove)
