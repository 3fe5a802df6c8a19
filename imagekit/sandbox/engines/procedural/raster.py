"""Small vectorised raster helpers shared by the scene and the looks: blends, resizes, tones."""

from __future__ import annotations

import cv2
import numpy as np

from .palette import Colour


def to_u8(image: np.ndarray) -> np.ndarray:
    """Round and clip a float image in 0..255 to uint8."""
    # OpenCV's saturating conversion is about twice as fast as clip-then-cast in NumPy.
    return cv2.convertScaleAbs(cv2.max(np.asarray(image, np.float32), 0.0))


def per_channel(plane: np.ndarray, channels: int = 3) -> np.ndarray:
    """A 2-D float plane repeated into ``channels`` interleaved channels (for OpenCV arithmetic)."""
    return cv2.merge([np.asarray(plane, np.float32)] * channels)


def planes(channels: list[np.ndarray], shape: tuple[int, int] | None = None) -> np.ndarray:
    """Interleave per-channel float planes (broadcastable to ``shape``) into an (H, W, C) image."""
    shape = shape or np.broadcast_shapes(*(np.shape(c) for c in channels))
    return cv2.merge([np.ascontiguousarray(np.broadcast_to(c, shape), np.float32) for c in channels])


def scalar(colour: Colour | np.ndarray) -> tuple[float, float, float, float]:
    """A colour as the four-float scalar OpenCV arithmetic applies per channel."""
    values = [float(v) for v in np.ravel(colour)][:4] + [0.0] * 4
    return values[0], values[1], values[2], values[3]


def mix(a: np.ndarray, b: np.ndarray | Colour, alpha: np.ndarray | float) -> np.ndarray:
    """``a * (1 - alpha) + b * alpha`` in float32; a 2-D ``alpha`` is a per-pixel mask.

    ``b`` is an image like ``a`` or one colour. Colour images go through OpenCV arithmetic,
    several times faster than NumPy broadcasting over a trailing axis of three.
    """
    a = np.asarray(a).astype(np.float32, copy=False)
    if a.ndim != 3:
        if isinstance(alpha, np.ndarray) and alpha.ndim == a.ndim - 1:
            alpha = alpha[..., None]
        return a + (np.asarray(b, np.float32) - a) * alpha
    if isinstance(b, np.ndarray) and b.shape == a.shape:
        diff = cv2.subtract(a, b.astype(np.float32, copy=False))
    else:
        diff = cv2.subtract(a, scalar(np.broadcast_to(np.asarray(b, np.float32), (a.shape[2],))))
    if isinstance(alpha, np.ndarray):
        weight = per_channel(alpha, a.shape[2]) if alpha.ndim == 2 else alpha.astype(np.float32, copy=False)
        return cv2.subtract(a, cv2.multiply(diff, weight))
    return cv2.subtract(a, diff * np.float32(alpha))


def resize(image: np.ndarray, w: int, h: int, smooth: bool = True) -> np.ndarray:
    """Resize to (w, h): area when shrinking, cubic or nearest (``smooth=False``) when growing."""
    if image.shape[1] == w and image.shape[0] == h:
        return image
    if not smooth:
        mode = cv2.INTER_NEAREST
    elif w < image.shape[1] and h < image.shape[0]:
        mode = cv2.INTER_AREA
    else:
        mode = cv2.INTER_CUBIC
    return cv2.resize(image, (w, h), interpolation=mode)


def shrink(image: np.ndarray, long_side: int) -> np.ndarray:
    """A copy no longer than ``long_side`` on its long side (unchanged if already smaller)."""
    h, w = image.shape[:2]
    f = long_side / max(h, w)
    if f >= 1.0:
        return image
    return resize(image, max(1, round(w * f)), max(1, round(h * f)))


def cover(image: np.ndarray, w: int, h: int) -> np.ndarray:
    """Scale to cover (w, h) keeping the aspect ratio, then crop the centre."""
    ih, iw = image.shape[:2]
    f = max(w / iw, h / ih)
    sw, sh = max(w, round(iw * f)), max(h, round(ih * f))
    scaled = resize(image, sw, sh)
    x0, y0 = (sw - w) // 2, (sh - h) // 2
    return np.ascontiguousarray(scaled[y0:y0 + h, x0:x0 + w])


def saturate(image: np.ndarray, factor: float) -> np.ndarray:
    """Scale the saturation of a uint8 RGB image."""
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
    hsv[..., 1] = np.clip(hsv[..., 1].astype(np.float32) * factor, 0, 255).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)


def luma(image: np.ndarray) -> np.ndarray:
    """Grey level of an RGB uint8 image, uint8 (h, w)."""
    return cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)


def stretch(grey: np.ndarray, clip: float = 0.02) -> np.ndarray:
    """Spread a uint8 grey image's levels over 0..255, ignoring the darkest and lightest ``clip``
    share: dark scenes keep their structure in looks that work from tone."""
    cdf = np.cumsum(np.bincount(grey.ravel(), minlength=256)) / grey.size
    lo, hi = int(np.searchsorted(cdf, clip)), int(np.searchsorted(cdf, 1.0 - clip))
    if hi - lo < 8:
        return grey
    lut = np.clip((np.arange(256, dtype=np.float32) - lo) * (255.0 / (hi - lo)) + 0.5, 0, 255)
    return cv2.LUT(grey, lut.astype(np.uint8))


def edge_mask(image: np.ndarray, width: int = 1, low: int = 40, high: int = 110) -> np.ndarray:
    """Canny edges of a lightly blurred copy, thickened to ``width`` pixels; uint8 0/255."""
    grey = cv2.GaussianBlur(luma(image), (5, 5), 0)
    edges = cv2.Canny(grey, low, high)
    if width > 1:
        edges = cv2.dilate(edges, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (width, width)))
    return edges


def soft_blur(image: np.ndarray, sigma: float) -> np.ndarray:
    """A wide Gaussian blur done on a shrunken copy (cheap for large sigmas), same shape back."""
    h, w = image.shape[:2]
    f = min(1.0, 4.0 / max(sigma, 1e-3))
    small = resize(image, max(1, round(w * f)), max(1, round(h * f))) if f < 1.0 else image
    blurred = cv2.GaussianBlur(small, (0, 0), max(sigma * f, 0.5))
    return resize(blurred, w, h) if f < 1.0 else blurred


def vignette(h: int, w: int, strength: float) -> np.ndarray:
    """Multiplicative darkening toward the corners, float32 (h, w) in [1 - strength, 1]."""
    # Smooth enough to compute on a small grid and scale up.
    sh, sw = min(h, 64), min(w, 64)
    y = np.linspace(-1.0, 1.0, sh, dtype=np.float32)[:, None]
    x = np.linspace(-1.0, 1.0, sw, dtype=np.float32)[None, :]
    small = 1.0 - strength * np.clip((x * x + y * y) * 0.5, 0.0, 1.0) ** 1.5
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def poly_points(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Points for ``cv2.fillPoly`` from x and y arrays (int32, shape (n, 1, 2))."""
    return np.stack([xs, ys], axis=-1).round().astype(np.int32).reshape(-1, 1, 2)


def cv_colour(c: Colour | np.ndarray) -> tuple[int, int, int]:
    """A palette colour (or a mix of colours as an array) as the int tuple OpenCV drawing calls want."""
    r, g, b = (int(round(float(v))) for v in np.ravel(c)[:3])
    return r, g, b
