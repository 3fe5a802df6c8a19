"""Small float32 filters the edits share: the guided filter, masked blur and pull-push interpolation."""

from __future__ import annotations

import cv2
import numpy as np

from imagekit.sandbox.engines.base import CheckFn


def _box(x: np.ndarray, radius: int) -> np.ndarray:
    return cv2.boxFilter(x, -1, (2 * radius + 1, 2 * radius + 1), borderType=cv2.BORDER_REFLECT)


def guided_filter(guide: np.ndarray, src: np.ndarray, radius: int, eps: float) -> np.ndarray:
    """He et al.'s guided filter with a single-channel float32 guide; ``src`` may have channels.

    Edge-preserving: where the guide varies by much more than ``sqrt(eps)`` the output follows
    the guide's edges; flatter areas are box-smoothed.
    """
    g = guide if src.ndim == 2 else guide[..., None]
    mean_g = _box(guide, radius)
    var_g = _box(guide * guide, radius) - mean_g * mean_g
    mean_g = mean_g if src.ndim == 2 else mean_g[..., None]
    var_g = var_g if src.ndim == 2 else var_g[..., None]
    mean_s = _box(src, radius)
    a = (_box(g * src, radius) - mean_g * mean_s) / (var_g + eps)
    b = mean_s - a * mean_g
    return _box(a, radius) * g + _box(b, radius)


def masked_blur(image: np.ndarray, known: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur that averages only ``known`` pixels (normalised convolution), float32."""
    weight = known.astype(np.float32)
    img = image.astype(np.float32) * (weight if image.ndim == 2 else weight[..., None])
    num = cv2.GaussianBlur(img, (0, 0), sigma)
    den = np.maximum(cv2.GaussianBlur(weight, (0, 0), sigma), 1e-6)
    return num / (den if image.ndim == 2 else den[..., None])


def pull_push(values: np.ndarray, known: np.ndarray, check: CheckFn) -> np.ndarray:
    """Smoothly interpolate float32 ``values`` into the pixels where ``known`` is False.

    Pull: average known samples down a pyramid; push: fill each level's gaps from the coarser one.
    Known pixels are returned unchanged; ``check`` runs once per pyramid level.
    """
    weight = known.astype(np.float32)
    expand = (lambda w: w) if values.ndim == 2 else (lambda w: w[..., None])
    levels: list[tuple[np.ndarray, np.ndarray]] = [(values * expand(weight), weight)]
    while min(levels[-1][1].shape) > 2:
        check()
        vw, w = levels[-1]
        levels.append((cv2.pyrDown(vw), cv2.pyrDown(w)))
    vw, w = levels[-1]
    filled = vw / expand(np.maximum(w, 1e-6))
    for vw, w in reversed(levels[:-1]):
        check()
        up = cv2.resize(filled, (w.shape[1], w.shape[0]), interpolation=cv2.INTER_LINEAR)
        # A coarse cell whose footprint was partly known is trusted in proportion (x4 saturates
        # at a quarter), so gaps inherit from the nearest known data rather than a global mean.
        trust = expand(np.clip(w * 4.0, 0.0, 1.0))
        filled = trust * (vw / expand(np.maximum(w, 1e-6))) + (1.0 - trust) * up
    return np.where(expand(known), values, filled).astype(np.float32)
