"""Reimagine (the retry edit): a seeded variation of an image, clearly related to it.

Three seeded moves, scaled by strength: a smooth warp (shapes drift), a colour regrade (hue, a
low-frequency light field, saturation, contrast) and a re-stylisation (edge-preserving smoothing
with fresh grain, i.e. the same scene redrawn rather than the same pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from imagekit.sandbox.engines.base import CheckFn
from imagekit.sandbox.interface.errors import SandboxError


@dataclass(frozen=True)
class _Strength:
    warp: float  # displacement amplitude, fraction of the shorter side
    hue: float  # max hue rotation, degrees
    light: float  # amplitude of the low-frequency brightness/tint field, grey levels
    saturation: float  # max relative saturation change
    smooth: float  # weight of the edge-preserving redraw (0 keeps the original texture)
    grain: float  # std of the fresh grain, grey levels


STRENGTHS = {
    "subtle": _Strength(warp=0.008, hue=6.0, light=6.0, saturation=0.08, smooth=0.35, grain=1.5),
    "strong": _Strength(warp=0.025, hue=22.0, light=18.0, saturation=0.25, smooth=0.8, grain=3.0),
}


def _smooth_field(rng: np.random.Generator, shape: tuple[int, int], cells: int, channels: int) -> np.ndarray:
    """Seeded random field in [-1, 1], smooth at ``cells`` features across the image."""
    h, w = shape
    coarse = rng.uniform(-1.0, 1.0, (cells + 1, cells + 1, channels)).astype(np.float32)
    field = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC)
    return field.reshape(h, w, channels)


def _warp(image: np.ndarray, rng: np.random.Generator, amount: float) -> np.ndarray:
    h, w = image.shape[:2]
    shift = _smooth_field(rng, (h, w), 4, 2) * (amount * min(h, w))
    gx, gy = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    return cv2.remap(image, gx + shift[..., 0], gy + shift[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def _regrade(image: np.ndarray, rng: np.random.Generator, s: _Strength) -> np.ndarray:
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV_FULL).astype(np.float32)
    hsv[..., 0] = (hsv[..., 0] + rng.uniform(-1, 1) * s.hue * 256 / 360) % 256
    hsv[..., 1] *= 1.0 + rng.uniform(-1, 1) * s.saturation
    rgb = cv2.cvtColor(np.clip(hsv, 0, 255).astype(np.uint8), cv2.COLOR_HSV2RGB_FULL).astype(np.float32)
    rgb += _smooth_field(rng, image.shape[:2], 2, 3) * s.light
    mean = rgb.mean()
    rgb = (rgb - mean) * (1.0 + rng.uniform(-0.5, 0.5) * s.saturation) + mean
    return np.clip(rgb, 0, 255).astype(np.uint8)


def _restyle(image: np.ndarray, rng: np.random.Generator, s: _Strength) -> np.ndarray:
    # Bilateral smoothing at a modest working size: the look of a redraw, at a fixed cost.
    h, w = image.shape[:2]
    scale = min(1.0, 512 / max(h, w))
    small = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    painted = cv2.bilateralFilter(small, 7, 40, 5)
    painted = cv2.resize(painted, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    out = (1.0 - s.smooth) * image.astype(np.float32) + s.smooth * painted
    out += rng.normal(0.0, s.grain, (h, w, 1)).astype(np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def reimagine(image: np.ndarray, strength: str, seed: int, check: CheckFn) -> np.ndarray:
    """A seeded variation of ``image``; ``subtle`` moves it less than ``strong``; same seed, same result.

    An unknown strength is 400 ``invalid_strength``.
    """
    if strength not in STRENGTHS:
        raise SandboxError("invalid_strength", f"strength must be one of {', '.join(STRENGTHS)}")
    s = STRENGTHS[strength]
    rng = np.random.default_rng(seed)
    out = image
    for step in (lambda a: _warp(a, rng, s.warp), lambda a: _regrade(a, rng, s), lambda a: _restyle(a, rng, s)):
        check()
        out = step(out)
    return out
