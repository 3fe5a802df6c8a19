"""The photographic look: smooth tones, highlight bloom, a colour grade, vignette and film grain."""

from __future__ import annotations

import cv2
import numpy as np

from ..noise import grain
from ..raster import per_channel, resize, shrink, soft_blur, to_u8, vignette
from .context import LookContext, unit


def _tone_curve(warmth: float) -> np.ndarray:
    """A (256, 1, 3) lookup table: half a smoothstep S curve, then a warm or cool grade."""
    x = np.linspace(0.0, 1.0, 256, dtype=np.float32)
    s = 0.5 * x + 0.5 * x * x * (3.0 - 2.0 * x)
    grade = np.array([1 + 0.05 * warmth, 1.0, 1 - 0.05 * warmth], np.float32)
    return np.clip(s[:, None] * grade * 255.0 + 0.5, 0, 255).astype(np.uint8).reshape(256, 1, 3)


def photo(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Render the scene as a photograph would show it."""
    h, w = image.shape[:2]
    u = unit(image)
    soft = cv2.GaussianBlur(image, (0, 0), max(0.6, u / 700))
    # Bloom: only the brightest parts, spread wide; computed small because it is blurred anyway.
    small = shrink(soft, 256).astype(np.float32)
    peak = cv2.max(cv2.max(small[..., 0], small[..., 1]), small[..., 2])
    bright = small * per_channel(np.clip((peak - 210.0) / 45.0, 0.0, 1.0))
    bloom = resize(soft_blur(bright, unit(small) / 40), w, h)
    toned = cv2.LUT(cv2.add(soft, to_u8(bloom * 0.35)), _tone_curve(ctx.rng.uniform(-1.0, 1.0)))
    ctx.check()
    # Vignette and grain in one pass: out = toned * vignette + grain.
    out = cv2.multiply(toned.astype(np.float32), per_channel(vignette(h, w, 0.38)))
    return to_u8(cv2.add(out, per_channel(grain(ctx.rng, h, w) * 4.0)))
