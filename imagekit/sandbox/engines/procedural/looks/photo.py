"""The photographic look: smooth tones, highlight bloom, a colour grade, vignette and film grain."""

from __future__ import annotations

import cv2
import numpy as np

from ..raster import grain, soft_blur, to_u8, vignette
from .context import LookContext, unit


def photo(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Render the scene as a photograph would show it."""
    h, w = image.shape[:2]
    u = unit(image)
    f = cv2.GaussianBlur(image, (0, 0), max(0.6, u / 700)).astype(np.float32) / 255.0
    bright = np.clip((f.max(axis=2) - 0.7) / 0.3, 0.0, 1.0)[..., None] * f
    f = f + 0.45 * soft_blur(bright, u / 35)
    # Half a smoothstep: an S curve that adds contrast without clipping the ends.
    f = np.clip(f, 0.0, 1.0)
    f = 0.5 * f + 0.5 * f * f * (3.0 - 2.0 * f)
    ctx.check()
    warm = ctx.rng.uniform(-1.0, 1.0)
    grade = np.array([1 + 0.05 * warm, 1.0, 1 - 0.05 * warm], np.float32)
    f = f * grade * vignette(h, w, 0.38)[..., None]
    noise = grain(ctx.rng, h, w)[..., None] * (4.0 / 255.0)
    return to_u8((f + noise) * 255.0)
