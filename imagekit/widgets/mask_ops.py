"""The painter's mask as a boolean array: read from any image or array, and edited at image resolution.

Pure NumPy and Pillow, no widget: the MaskPainter's methods call these, and their tests need no browser.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image as PILImage

from ..media import size_mismatch

__all__ = ["box", "grow", "polygon", "shrink", "smooth", "to_bits"]

_LUMA = np.array([0.299, 0.587, 0.114])  # as Pillow's convert("L")


def _half(dtype: np.dtype) -> float:
    """The threshold at half a dtype's range: 0.5 for floats, 32768 for uint16, else 128 (8-bit values)."""
    if np.issubdtype(dtype, np.floating):
        return 0.5
    return 32768 if dtype == np.uint16 else 128


def _array_bits(array: np.ndarray) -> np.ndarray:
    if array.dtype == bool and array.ndim == 2:
        return array
    if array.ndim == 3 and array.shape[2] in (2, 4):  # the last channel is alpha: alpha marks the paint
        array = array[..., -1]
    elif array.ndim == 3 and array.shape[2] == 3:
        array = array @ _LUMA
    elif array.ndim == 3 and array.shape[2] == 1:
        array = array[..., 0]
    if array.ndim != 2:
        raise ValueError(f"a mask array must be (height, width) or (height, width, 1-4 channels), got {array.shape}")
    return array.astype(bool) if array.dtype == bool else array >= _half(array.dtype)


def _image_bits(picture: PILImage.Image) -> np.ndarray:
    if picture.mode == "P":
        picture = picture.convert("RGBA" if "transparency" in picture.info else "L")
    if picture.mode == "1":
        return np.asarray(picture, bool)
    if "A" in picture.getbands() or "a" in picture.getbands():
        band = "A" if "A" in picture.getbands() else "a"
        return np.asarray(picture.getchannel(band)) >= 128
    if picture.mode.startswith(("I", "F")):
        return _array_bits(np.asarray(picture))
    return np.asarray(picture.convert("L")) >= 128


def to_bits(value: Any, size: tuple[int, int]) -> np.ndarray:
    """A mask of ``size`` (width, height) as a boolean array, from a PIL image or array of any mode.

    Thresholded at half the value range: an image with alpha is painted where alpha >= 128 (as the
    painter's own masks are), any other where its grey value is (16-bit at 32768, floats at 0.5);
    a bool array is taken as it is; None is an empty mask. Another size raises ValueError naming both.
    """
    if value is None:
        return np.zeros((size[1], size[0]), bool)
    bits = _image_bits(value) if isinstance(value, PILImage.Image) else _array_bits(np.asarray(value))
    if bits.shape != (size[1], size[0]):
        raise ValueError(f"{size_mismatch((bits.shape[1], bits.shape[0]), size)}; "
                         "make the mask at the image's size")
    return bits


def _row_distance(bits: np.ndarray, cap: int) -> np.ndarray:
    """Each pixel's distance along its row to the nearest set pixel, capped at ``cap``."""
    height, width = bits.shape
    out = np.empty(bits.shape, np.int16)
    x = np.arange(width, dtype=np.int32)
    for top in range(0, height, 512):  # in bands: an 8192 px mask needs no full-size int32 arrays
        band = bits[top:top + 512]
        left = np.maximum.accumulate(np.where(band, x, -2 * cap - 2), axis=1)
        right = np.minimum.accumulate(np.where(band, x, width + 2 * cap + 2)[:, ::-1], axis=1)[:, ::-1]
        out[top:top + 512] = np.minimum(np.minimum(x - left, right - x), cap)
    return out


def _amount(px: int) -> int:
    if isinstance(px, bool) or not isinstance(px, int | float) or int(px) != px or px < 0:
        raise ValueError(f"grow, shrink and smooth take a whole number of pixels, 0 or more, got {px!r}")
    return int(px)


def grow(bits: np.ndarray, px: int) -> np.ndarray:
    """Paint every pixel whose centre lies within ``px`` of a painted one's (a disc, exactly)."""
    px = _amount(px)
    if not px:
        return bits.copy()
    rows = _row_distance(bits, px + 1)
    height = bits.shape[0]
    out = np.zeros_like(bits)
    for dy in range(-px, px + 1):  # the disc, row by row: each row reaches floor(sqrt(px² - dy²))
        reach = int(np.floor(np.sqrt(px * px - dy * dy)))
        out[max(0, -dy):height - max(0, dy)] |= rows[max(0, dy):height + min(0, dy)] <= reach
    return out


def shrink(bits: np.ndarray, px: int) -> np.ndarray:
    """Keep the pixels more than ``px`` inside the painted area. Beyond the image's edges counts as
    painted, so paint touching an edge stays on it (as an editor's Contract does)."""
    return ~grow(~bits, px)


def smooth(bits: np.ndarray, px: int) -> np.ndarray:
    """Round off what is narrower than about twice ``px``: gaps and notches close (a closing), then
    specks and spurs go (an opening); corners round, large shapes keep their place and size."""
    closed = shrink(grow(bits, px), px)
    return grow(shrink(closed, px), px)


def polygon(size: tuple[int, int], points: Any) -> np.ndarray:
    """The pixels of an image of ``size`` (width, height) whose centres lie inside the polygon
    (even-odd rule, image pixels), as the painter's Lasso fills them in the browser."""
    corners = np.asarray(points, float).reshape(-1, 2)
    if len(corners) < 3:
        raise ValueError(f"a polygon needs at least 3 points, got {len(corners)}")
    width, height = size
    out = np.zeros((height, width), bool)
    y0, y1 = max(0, int(np.floor(corners[:, 1].min()))), min(height, int(np.ceil(corners[:, 1].max())))
    if y0 >= y1:
        return out
    a, b = corners, np.roll(corners, -1, axis=0)
    yc = np.arange(y0, y1)[:, None] + 0.5
    crosses = (a[:, 1] <= yc) != (b[:, 1] <= yc)  # (rows, edges)
    with np.errstate(divide="ignore", invalid="ignore"):
        xs = np.where(crosses, a[:, 0] + ((yc - a[:, 1]) * (b[:, 0] - a[:, 0])) / (b[:, 1] - a[:, 1]), np.inf)
    xs.sort(axis=1)
    count = crosses.sum(axis=1)
    edges = np.zeros((y1 - y0, width + 1), np.int32)  # +1 where a span starts, -1 where it ends
    for k in range(0, int(count.max()) - 1, 2):
        rows = np.nonzero(count > k + 1)[0]
        start = np.clip(np.ceil(xs[rows, k] - 0.5), 0, width).astype(int)
        end = np.clip(np.ceil(xs[rows, k + 1] - 0.5), 0, width).astype(int)
        np.add.at(edges, (rows, start), 1)
        np.add.at(edges, (rows, end), -1)
    out[y0:y1] = np.cumsum(edges, axis=1)[:, :width] > 0
    return out


def box(size: tuple[int, int], corners: tuple[float, float, float, float]) -> np.ndarray:
    """The pixels of the box (left, top, right, bottom) in an image of ``size``; right and bottom
    are exclusive, as in PIL's crop."""
    try:
        left, top, right, bottom = (float(corner) for corner in corners)
    except (TypeError, ValueError):
        raise ValueError(f"a box is (left, top, right, bottom) in image pixels, got {corners!r}") from None
    return polygon(size, [(left, top), (right, top), (right, bottom), (left, bottom)])
