"""MaskPainter: paint a mask over an image in the browser, read it in Python, fill or clean up with it.

The browser paints on a canvas at the image's own resolution and sends the mask once per stroke, as a
PNG whose alpha channel marks the painted pixels (``mask_png``). Undo and redo live in the browser.
"""

from __future__ import annotations

import io
from typing import Any, Callable

import anywidget
import numpy as np
from ipywidgets import CallbackDispatcher
from PIL import Image as PILImage
from traitlets import Enum, Float, Int, Unicode, validate

from ._assets import asset_text
from ._common import binary_trait, load_picture, plain_error

__all__ = ["MaskPainter"]


class MaskPainter(anywidget.AnyWidget):
    """Paint a mask over an image (Image handle, PIL image or path) with brush, eraser, undo and redo.

    ``mask`` is the mask as a PIL "L" image (255 = painted) at the image's size, ``mask_array()`` the
    same as a boolean array; ``fill()`` and ``clean_up()`` edit the image with it (Image handles only)
    and show the result beside the original.
    """

    _esm = asset_text("mask_painter.js")
    _css = asset_text("mask_painter.css")

    image_data = binary_trait("the image shown, as PNG, JPEG or WebP bytes")
    width = Int(help="the image's width in pixels; the mask has the same").tag(sync=True)
    height = Int(help="the image's height in pixels; the mask has the same").tag(sync=True)
    mask_png = binary_trait("the mask as a PNG whose alpha marks painted pixels (b'' = nothing painted)")
    revision = Int(0, help="bumped by whichever side changed mask_png, so a side skips its own echo").tag(sync=True)
    received = Int(0, help="the last mask revision the kernel decoded; the browser times syncs by it").tag(sync=True)
    tool = Enum(("brush", "eraser"), "brush", help="what a stroke does: brush paints, eraser unpaints").tag(sync=True)
    brush_size = Int(24, help="brush diameter in image pixels (at least 1)").tag(sync=True)
    opacity = Float(0.5, min=0.0, max=1.0, help="opacity of the mask overlay").tag(sync=True)
    max_view = Int(640, min=64, help="largest displayed width in CSS pixels; larger images are scaled to fit").tag(sync=True)
    result_data = binary_trait("the last edit's result (PNG), shown beside the original")
    status = Unicode("", help="what the painter is doing, or the last error in plain words").tag(sync=True)

    def __init__(self, image: Any, *, brush_size: int | None = None, **traits: Any) -> None:
        data, picture, handle = load_picture(image)
        brush_size = brush_size or max(4, round(max(picture.size) / 32))
        super().__init__(image_data=data, width=picture.width, height=picture.height,
                         brush_size=brush_size, **traits)
        self.source = handle
        """The Image handle being painted on (None for a PIL image or a file)."""
        self.result = None
        """The Image the last ``fill()`` or ``clean_up()`` produced."""
        self._mask_callbacks = CallbackDispatcher()
        self._result_callbacks = CallbackDispatcher()
        self.observe(self._mask_arrived, "mask_png")

    def __repr__(self) -> str:
        return f"MaskPainter({self.width}x{self.height}, painted={self.mask_array().mean():.1%}, tool={self.tool!r})"

    @validate("brush_size")
    def _clip_brush(self, proposal: Any) -> int:
        return max(1, int(proposal["value"]))

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
        """Replace the mask: a PIL image, a bool or uint8 array (nonzero = painted), or None to clear."""
        if value is None:
            array = np.zeros((self.height, self.width), bool)
        elif isinstance(value, PILImage.Image):
            array = np.asarray(value.convert("L").resize((self.width, self.height))) >= 128
        else:
            array = np.asarray(value)
            array = array >= 128 if array.dtype == np.uint8 else array.astype(bool)
        if array.shape != (self.height, self.width):
            raise ValueError(f"a mask of shape {array.shape} does not fit a {self.width}x{self.height} image")
        alpha = PILImage.fromarray(array.astype(np.uint8) * 255)
        out = io.BytesIO()
        PILImage.merge("LA", (PILImage.new("L", alpha.size, 255), alpha)).save(out, format="PNG")
        with self.hold_sync():
            self.revision += 1
            self.mask_png = out.getvalue()

    def mask_array(self) -> np.ndarray:
        """The mask as a boolean array of shape (height, width)."""
        return np.asarray(self.mask) > 0

    def clear(self) -> None:
        """Unpaint everything (the browser can undo it)."""
        self.mask = None

    def invert(self) -> None:
        """Swap painted and unpainted (the browser can undo it)."""
        self.mask = ~self.mask_array()

    def _mask_arrived(self, change: dict) -> None:
        self.received = self.revision
        self._mask_callbacks(self)

    # -- edits -----------------------------------------------------------------------------------
    def fill(self, prompt: str, negative: str = "", **options: Any) -> Any:
        """Regenerate the painted area from ``prompt``; returns the new Image and shows it."""
        return self._edit("Filling", lambda image, mask: image.fill(mask, prompt, negative, **options))

    def clean_up(self, **options: Any) -> Any:
        """Remove what is painted; returns the new Image and shows it."""
        return self._edit("Cleaning up", lambda image, mask: image.clean_up(mask, **options))

    def _edit(self, doing: str, run: Callable[[Any, Any], Any]) -> Any:
        if self.source is None:
            raise ValueError("edits need an image on the service: make the painter from an Image handle")
        self.status = f"{doing}…"
        try:
            result = run(self.source, self.mask)
            self.result_data = result.read("png")
        except Exception as exc:
            self.status = plain_error(exc)
            raise
        self.result, self.status = result, ""
        self._result_callbacks(result)
        return result

    # -- callbacks -------------------------------------------------------------------------------
    def on_mask(self, callback: Callable[[MaskPainter], Any], remove: bool = False) -> None:
        """Call ``callback(painter)`` each time the mask changes (once per finished stroke)."""
        self._mask_callbacks.register_callback(callback, remove=remove)

    def on_result(self, callback: Callable[[Any], Any], remove: bool = False) -> None:
        """Call ``callback(image)`` with each edit's result."""
        self._result_callbacks.register_callback(callback, remove=remove)
