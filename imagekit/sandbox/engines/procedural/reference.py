"""Reference-image mode: a seeded variation of the user's picture, coloured toward the prompt."""

from __future__ import annotations

import cv2
import numpy as np

from .noise import displace
from .raster import cover, to_u8


def as_rgb(image: np.ndarray) -> np.ndarray:
    """Accept grey, RGB or RGBA of any numeric dtype; return uint8 RGB (H, W, 3)."""
    arr = np.asarray(image)
    if arr.ndim == 2:
        arr = arr[..., None]
    if arr.ndim != 3 or arr.shape[2] not in (1, 3, 4) or min(arr.shape[:2]) < 1:
        raise ValueError(f"reference must be an (H, W, 3) RGB image, got shape {arr.shape}")
    if arr.dtype != np.uint8:
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    if arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    return np.ascontiguousarray(arr[..., :3])


def _lab(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)


def variation(reference: np.ndarray, w: int, h: int, mood: np.ndarray, rng: np.random.Generator,
              strength: float = 0.5) -> np.ndarray:
    """The reference fitted to (w, h), its colour statistics pulled toward ``mood`` (a small
    rendering of the prompt's scene) by ``strength``, then gently warped and relit by the seed."""
    base = cover(as_rgb(reference), w, h)
    src, tgt = _lab(base), _lab(mood).reshape(-1, 3)
    mu_s, sd_s = src.reshape(-1, 3).mean(axis=0), src.reshape(-1, 3).std(axis=0) + 1e-3
    mu_t, sd_t = tgt.mean(axis=0), tgt.std(axis=0) + 1e-3
    # Lightness moves less than colour so the picture's structure stays recognisable.
    weight = np.array([0.3, 1.0, 1.0], np.float32) * strength
    matched = (src - mu_s) / sd_s * sd_t + mu_t
    lab = src + (matched - src) * weight
    rgb = cv2.cvtColor(lab.astype(np.float32), cv2.COLOR_Lab2RGB) * 255.0
    gain = rng.uniform(0.94, 1.06, 3).astype(np.float32)
    warped = displace(rgb.astype(np.float32), rng, min(w, h) * 0.008, 3.0)
    return to_u8(warped * gain)
