"""Nearest-colour mapping: which of a few colours each pixel is closest to, and snapping to them."""

from __future__ import annotations

import numpy as np


def _exact_nearest(pixels: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """Nearest colour index for (n, 3) float pixels, by brute force over the k colours."""
    best = np.full(len(pixels), np.inf, np.float32)
    index = np.zeros(len(pixels), np.intp)
    for i, c in enumerate(colours):
        d = ((pixels - c) ** 2).sum(axis=1)
        closer = d < best
        best[closer], index[closer] = d[closer], i
    return index


_LUT_BITS = 5
_LUT_CENTRES = ((np.indices((1 << _LUT_BITS,) * 3).reshape(3, -1).T + 0.5) * (256 >> _LUT_BITS)).astype(np.float32)
"""RGB centre of every cell of a 32x32x32 colour cube."""


def nearest(image: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """Index of the nearest of ``colours`` (k, 3) for every pixel of ``image`` (H, W, 3)."""
    c = np.asarray(colours, np.float32)
    if image.dtype != np.uint8 or image.size < 3 * 65536:
        return _exact_nearest(image.reshape(-1, 3).astype(np.float32), c).reshape(image.shape[:2])
    # Large uint8 images go through a 32x32x32 lookup table: the same answer up to rounding
    # of the last three bits, at the cost of a few integer passes instead of k float passes.
    lut = _exact_nearest(_LUT_CENTRES, c).astype(np.uint16)
    shift = 8 - _LUT_BITS
    q = (image >> shift).astype(np.int32)
    return lut[(q[..., 0] << (2 * _LUT_BITS)) | (q[..., 1] << _LUT_BITS) | q[..., 2]]


def snap(image: np.ndarray, colours: np.ndarray, strength: float) -> np.ndarray:
    """Pull every pixel toward its nearest palette colour by ``strength`` (1.0 = hard quantise)."""
    target = np.asarray(colours, np.float32)[nearest(image, colours)]
    out = target if strength >= 1.0 else image.astype(np.float32) * (1.0 - strength) + target * strength
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)
