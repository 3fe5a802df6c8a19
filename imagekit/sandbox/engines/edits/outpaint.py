"""Outpainting: place the (resized) original on a larger canvas and synthesise the rest around it."""

from __future__ import annotations

from numbers import Real

import cv2
import numpy as np

from imagekit.sandbox.engines.base import CheckFn
from imagekit.sandbox.engines.edits.codecs import MAX_OUTPUT_SIDE
from imagekit.sandbox.engines.edits.synthesis import synthesize
from imagekit.sandbox.interface.errors import SandboxError

# The placed original may be larger than the canvas (a zoomed crop); only its visible part is ever
# rendered, but absurd scales are refused.
MAX_PLACED_SIDE = 4 * MAX_OUTPUT_SIDE

Pair = tuple[int, int]


def _invalid(message: str) -> SandboxError:
    return SandboxError("invalid_outpaint", message)


def _pair(value: object, what: str) -> Pair:
    """Two integral numbers (JSON may send 512.0), else 400 ``invalid_outpaint``."""
    a: object
    b: object
    try:
        a, b = value  # type: ignore[misc]
    except (TypeError, ValueError):
        raise _invalid(f"{what} must be two numbers") from None
    if not all(isinstance(v, Real) and not isinstance(v, bool) and float(v).is_integer() for v in (a, b)):
        raise _invalid(f"{what} must be two whole numbers")
    return int(a), int(b)


def validate(canvas: object, size: object, at: object) -> tuple[Pair, Pair, Pair]:
    """Check the outpaint geometry; the placed original must overlap the canvas."""
    canvas, size, at = _pair(canvas, "canvasSize"), _pair(size, "originalImageSize"), _pair(at, "originalImageLocation")
    if not all(1 <= v <= MAX_OUTPUT_SIDE for v in canvas):
        raise _invalid(f"canvasSize sides must be 1..{MAX_OUTPUT_SIDE}")
    if not all(1 <= v <= MAX_PLACED_SIDE for v in size):
        raise _invalid(f"originalImageSize sides must be 1..{MAX_PLACED_SIDE}")
    if at[0] >= canvas[0] or at[1] >= canvas[1] or at[0] + size[0] <= 0 or at[1] + size[1] <= 0:
        raise _invalid("the original placed at originalImageLocation does not overlap the canvas")
    return canvas, size, at


def place(image: np.ndarray, canvas: Pair, size: Pair, at: Pair) -> tuple[np.ndarray, np.ndarray]:
    """The canvas with the original resized to ``size`` at ``at`` (cropped to fit), and its known mask.

    Shrinking uses area averaging of the whole image; enlarging renders only the visible part
    (bicubic), so a huge zoomed placement never allocates the full enlarged original.
    """
    (cw, ch), (sw, sh), (ax, ay) = canvas, size, at
    x0, y0, x1, y1 = max(ax, 0), max(ay, 0), min(ax + sw, cw), min(ay + sh, ch)
    src_h, src_w = image.shape[:2]
    if (sw, sh) == (src_w, src_h):
        visible = image[y0 - ay : y1 - ay, x0 - ax : x1 - ax]
    elif sw * sh <= src_w * src_h:
        visible = cv2.resize(image, (sw, sh), interpolation=cv2.INTER_AREA)[y0 - ay : y1 - ay, x0 - ax : x1 - ax]
    else:
        # Inverse map from the visible rectangle to source coordinates, pixel centres aligned as
        # cv2.resize aligns them.
        fx, fy = src_w / sw, src_h / sh
        matrix = np.array([[fx, 0, fx * (x0 - ax + 0.5) - 0.5], [0, fy, fy * (y0 - ay + 0.5) - 0.5]])
        visible = cv2.warpAffine(
            image, matrix, (x1 - x0, y1 - y0), flags=cv2.INTER_CUBIC | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )
    out = np.zeros((ch, cw, 3), np.uint8)
    known = np.zeros((ch, cw), bool)
    out[y0:y1, x0:x1] = visible
    known[y0:y1, x0:x1] = True
    return out, known


def outpaint(
    image: np.ndarray, canvas: Pair, size: Pair, at: Pair, seed: int, check: CheckFn
) -> np.ndarray:
    """A ``canvas`` (w, h) image: the original resized to ``size`` (w, h) with its top-left at ``at``
    (x, y; may be negative), the rest synthesised without a seam. The placed pixels are kept exactly.
    Bad geometry is 400 ``invalid_outpaint``.
    """
    canvas, size, at = validate(canvas, size, at)
    check()
    placed, known = place(image, canvas, size, at)
    return synthesize(placed, known, seed, check)
