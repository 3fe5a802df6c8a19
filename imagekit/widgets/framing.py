"""Outpaint framing: where the original sits on a larger canvas, as the widgets drag, type and check it.

Pure arithmetic, no widget. A frame holds the three fields of an outpaint request: the canvas size,
the original's top-left on the canvas (negative where the original sticks out) and the original's
size there. The limits are the service's: canvases of 100 to 8192 px a side (resolutions have 3 or 4
digits), and the placed original must overlap the canvas.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Frame", "MAX_SIDE", "MIN_SIDE", "check", "extend", "problem", "start", "with_ratio"]

MIN_SIDE = 100
MAX_SIDE = 8192
MAX_PLACED_SIDE = 4 * MAX_SIDE  # the original may be drawn larger than the canvas (a zoomed crop)

Pair = tuple[int, int]


class Frame(NamedTuple):
    """An outpaint's geometry, in canvas pixels."""

    canvas: Pair
    """The new canvas's (width, height): canvasSize."""
    location: Pair
    """The original's top-left (x, y) on the canvas, negative where it sticks out: originalImageLocation."""
    size: Pair
    """The original's (width, height) on the canvas: originalImageSize."""


def start(size: tuple[int, int]) -> Frame:
    """The frame of an image of ``size`` that adds nothing: the canvas is the image."""
    return Frame((int(size[0]), int(size[1])), (0, 0), (int(size[0]), int(size[1])))


def _whole(pair: Any) -> Pair | None:
    """Two whole numbers (12.0 counts: JSON may send it), else None."""
    try:
        a, b = pair
        if all(not isinstance(v, bool) and float(v).is_integer() for v in (a, b)):
            return int(a), int(b)
    except (TypeError, ValueError):
        pass
    return None


def problem(canvas: Any, location: Any, size: Any) -> str:
    """Why the service would refuse this frame, in plain words; "" when it would take it."""
    pairs = [_whole(canvas), _whole(location), _whole(size)]
    if None in pairs:
        return f"canvas, location and size are each two whole numbers of pixels, got {canvas}, {location}, {size}"
    (cw, ch), (x, y), (sw, sh) = pairs  # type: ignore[misc]
    if not (MIN_SIDE <= cw <= MAX_SIDE and MIN_SIDE <= ch <= MAX_SIDE):
        return f"the canvas must be {MIN_SIDE} to {MAX_SIDE} px a side, got {cw}×{ch}"
    if not (1 <= sw <= MAX_PLACED_SIDE and 1 <= sh <= MAX_PLACED_SIDE):
        return f"the original's size must be 1 to {MAX_PLACED_SIDE} px a side, got {sw}×{sh}"
    if x >= cw or y >= ch or x + sw <= 0 or y + sh <= 0:
        return f"the original ({sw}×{sh} at {x}, {y}) does not overlap the {cw}×{ch} canvas"
    return ""


def check(canvas: Any, location: Any, size: Any) -> Frame:
    """The frame as whole numbers, or ValueError saying why the service would refuse it."""
    why = problem(canvas, location, size)
    if why:
        raise ValueError(f"cannot outpaint: {why}")
    return Frame(*(_whole(pair) for pair in (canvas, location, size)))  # type: ignore[arg-type]


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def extend(frame: Frame, left: int = 0, top: int = 0, right: int = 0, bottom: int = 0) -> Frame:
    """Move the canvas's edges outward by so many pixels (negative: inward), as dragging them does.

    Each moved edge stops where the canvas would leave the service's limits or lose the original.
    """
    (cw, ch), (x, y), (sw, sh) = frame
    x0, y0, x1, y1 = -x, -y, cw - x, ch - y  # the canvas, in the placed original's pixels
    if left:
        x0 = _clamp(x0 - left, x1 - MAX_SIDE, min(x1 - MIN_SIDE, sw - 1))
    if right:
        x1 = _clamp(x1 + right, max(x0 + MIN_SIDE, 1), x0 + MAX_SIDE)
    if top:
        y0 = _clamp(y0 - top, y1 - MAX_SIDE, min(y1 - MIN_SIDE, sh - 1))
    if bottom:
        y1 = _clamp(y1 + bottom, max(y0 + MIN_SIDE, 1), y0 + MAX_SIDE)
    return Frame((x1 - x0, y1 - y0), (-x0, -y0), (sw, sh))


def with_ratio(frame: Frame, ratio: str) -> Frame:
    """The smallest canvas of ``ratio`` ("16:9") around the current one, centred on it (within the
    limits: a canvas that would be too large is the largest of that ratio, centred the same)."""
    try:
        rw, rh = (float(part) for part in ratio.split(":"))
        if rw <= 0 or rh <= 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"a ratio looks like 16:9, got {ratio!r}") from None
    (cw, ch), (x, y), size = frame
    width, height = max(cw, ch * rw / rh), max(ch, cw * rh / rw)
    shrink = min(1.0, MAX_SIDE / width, MAX_SIDE / height)
    width, height = max(MIN_SIDE, round(width * shrink)), max(MIN_SIDE, round(height * shrink))
    return Frame((width, height), (x + (width - cw) // 2, y + (height - ch) // 2), size)
