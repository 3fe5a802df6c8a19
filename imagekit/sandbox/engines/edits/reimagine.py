"""Reimagine: a seeded variation of an image: warped shapes, shifted colours, re-rendered texture."""

from __future__ import annotations

import cv2
import numpy as np

from imagekit.sandbox.engines.base import CheckFn

_STRENGTH = {"subtle": (0.012, 6.0, 0.15), "strong": (0.045, 24.0, 0.45)}
"""strength -> (warp amplitude as a share of the long side, hue shift in degrees, stylisation share)."""
_BAND = 256


def _field(rng: np.random.Generator, height: int, width: int, amplitude: float) -> tuple[np.ndarray, np.ndarray]:
    """A smooth random displacement field (coarse noise, upsampled), in pixels."""
    coarse = rng.standard_normal((2, 6, 6)).astype(np.float32)
    dx, dy = (cv2.resize(c, (width, height), interpolation=cv2.INTER_CUBIC) * amplitude for c in coarse)
    return dx, dy


def reimagine(image: np.ndarray, strength: str, seed: int, check: CheckFn) -> np.ndarray:
    """A new variation; ``strong`` moves shapes and colours further than ``subtle``."""
    warp, hue_shift, stylise = _STRENGTH[strength]
    height, width = image.shape[:2]
    rng = np.random.default_rng(seed)
    dx, dy = _field(rng, height, width, warp * max(height, width))
    grid_x, grid_y = np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32))
    out = np.empty_like(image)
    for top in range(0, height, _BAND):  # in bands, so a cancel lands within one band
        check()
        rows = slice(top, min(top + _BAND, height))
        out[rows] = cv2.remap(image, grid_x[rows] + dx[rows], grid_y[rows] + dy[rows], cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REFLECT)
    hsv = cv2.cvtColor(out, cv2.COLOR_RGB2HSV).astype(np.int16)
    hsv[..., 0] = (hsv[..., 0] + int(round(rng.choice([-1, 1]) * hue_shift / 2))) % 180
    out = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2RGB)
    check()
    painted = cv2.edgePreservingFilter(out, flags=cv2.RECURS_FILTER, sigma_s=40, sigma_r=0.3)
    return cv2.addWeighted(out, 1 - stylise, painted, stylise, 0)
