"""Small vectorised raster helpers shared by the scene and the looks (noise, blends, resizes)."""

from __future__ import annotations

import cv2
import numpy as np

from .palette import Colour


def fbm(rng: np.random.Generator, h: int, w: int, cells: float, octaves: int = 3,
        gain: float = 0.5) -> np.ndarray:
    """Smooth fractal value noise in [0, 1], float32 (h, w); ``cells`` = features across the short side."""
    unit = min(h, w)
    out = np.zeros((h, w), np.float32)
    total = 0.0
    amp = 1.0
    for octave in range(octaves):
        c = cells * (2 ** octave)
        gh, gw = max(2, int(np.ceil(c * h / unit)) + 1), max(2, int(np.ceil(c * w / unit)) + 1)
        grid = rng.random((gh, gw), dtype=np.float32)
        out += amp * cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= gain
    return np.clip(out / total, 0.0, 1.0)


def noise1d(rng: np.random.Generator, n: int, cells: float, octaves: int = 4) -> np.ndarray:
    """Smooth fractal noise along one axis, float32 (n,) in [0, 1] (ridge lines, wave phases)."""
    return fbm(rng, 1, n, cells, octaves)[0] if n > 1 else np.zeros(n, np.float32)


def grain(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Per-pixel standard-normal noise, float32 (h, w)."""
    return rng.standard_normal((h, w), dtype=np.float32)


def displace(image: np.ndarray, rng: np.random.Generator, amount: float, cells: float) -> np.ndarray:
    """Warp an image by smooth noise (``amount`` pixels at most): wobbly, hand-made edges."""
    h, w = image.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    dx = (fbm(rng, h, w, cells, 2) - 0.5) * 2 * amount
    dy = (fbm(rng, h, w, cells, 2) - 0.5) * 2 * amount
    return cv2.remap(image, xx + dx, yy + dy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def to_u8(image: np.ndarray) -> np.ndarray:
    """Round and clip a float image in 0..255 to uint8."""
    return np.clip(image + 0.5, 0, 255).astype(np.uint8)


def mix(a: np.ndarray, b: np.ndarray | Colour, alpha: np.ndarray | float) -> np.ndarray:
    """``a * (1 - alpha) + b * alpha`` in float32; a 2-D ``alpha`` is a per-pixel mask."""
    a = np.asarray(a).astype(np.float32, copy=False)
    if isinstance(alpha, np.ndarray) and alpha.ndim == 2 and a.ndim == 3:
        alpha = alpha[..., None]
    return a + (np.asarray(b, np.float32) - a) * alpha


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


def luma(image: np.ndarray) -> np.ndarray:
    """Grey level of an RGB uint8 image, uint8 (h, w)."""
    return cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)


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
    y = np.linspace(-1.0, 1.0, h, dtype=np.float32)[:, None]
    x = np.linspace(-1.0, 1.0, w, dtype=np.float32)[None, :]
    return 1.0 - strength * np.clip((x * x + y * y) * 0.5, 0.0, 1.0) ** 1.5


def poly_points(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Points for ``cv2.fillPoly`` from x and y arrays (int32, shape (n, 1, 2))."""
    return np.stack([xs, ys], axis=-1).round().astype(np.int32).reshape(-1, 1, 2)


def cv_colour(c: Colour) -> tuple[int, int, int]:
    """A palette colour as the int tuple OpenCV drawing calls want."""
    return tuple(int(round(v)) for v in c)
