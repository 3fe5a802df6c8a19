"""Colour naming: every pixel goes to its nearest prototype in CIE Lab, prototypes carry a name.

A nearest-prototype histogram instead of k-means keeps the result deterministic and cheap, and
gives named bins directly. Several prototypes per name cover its dark and light variants; each
prototype also carries a shade tag ("deep", "light" or None) so the dominant variant of a
colour can be named ("deep blue") without a second pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

import cv2
import numpy as np

Shade = Literal["deep", "light"]

# (name, shade, sRGB). Order only matters for ties, which keep the first prototype.
_PROTOTYPES: tuple[tuple[str, Shade | None, tuple[int, int, int]], ...] = (
    ("black", None, (12, 12, 12)),
    ("grey", "deep", (70, 70, 70)),
    ("grey", None, (128, 128, 128)),
    ("grey", "light", (190, 190, 190)),
    ("white", None, (248, 248, 248)),
    ("red", None, (220, 30, 35)),
    ("red", "deep", (140, 15, 20)),
    ("orange", None, (245, 135, 25)),
    ("orange", "light", (250, 185, 120)),
    ("yellow", None, (250, 220, 40)),
    ("yellow", "light", (250, 240, 150)),
    ("green", None, (50, 170, 60)),
    ("green", "deep", (20, 90, 35)),
    ("green", "light", (150, 210, 110)),
    ("teal", None, (20, 150, 145)),
    ("teal", "deep", (0, 85, 85)),
    ("blue", None, (40, 90, 225)),
    ("blue", "deep", (20, 30, 120)),
    ("blue", "deep", (25, 35, 75)),  # navy: without it dark blues drift to purple in Lab
    ("blue", "light", (125, 175, 235)),
    ("purple", None, (135, 55, 175)),
    ("purple", "deep", (70, 25, 100)),
    ("purple", "light", (185, 150, 220)),
    ("pink", None, (235, 110, 170)),
    ("pink", "light", (250, 190, 210)),
    ("brown", None, (125, 75, 35)),
    ("brown", "deep", (75, 45, 25)),
    ("beige", None, (220, 200, 160)),
)

COLOUR_NAMES: tuple[str, ...] = tuple(dict.fromkeys(name for name, _, _ in _PROTOTYPES))
"""Every colour name :func:`name_colours` can return, in table order."""


def to_lab(rgb: np.ndarray) -> np.ndarray:
    """uint8 RGB (..., 3) to float32 Lab with L in 0..100 (cv2's float convention)."""
    flat = rgb.reshape(-1, 1, 3).astype(np.float32) / 255.0
    return cv2.cvtColor(flat, cv2.COLOR_RGB2Lab).reshape(rgb.shape)


@cache
def _proto_lab() -> np.ndarray:
    """The prototypes in Lab, made on first use: OpenCV's first float RGB-to-Lab conversion builds
    its tables (some 70 ms), which a process that never names a colour need not pay."""
    return to_lab(np.array([rgb for _, _, rgb in _PROTOTYPES], dtype=np.uint8))


_PROTO_NAME = np.array([COLOUR_NAMES.index(name) for name, _, _ in _PROTOTYPES])
_SHADE_CODES: tuple[Shade | None, ...] = (None, "deep", "light")
_PROTO_SHADE = np.array([_SHADE_CODES.index(shade) for _, shade, _ in _PROTOTYPES])


def nearest(points: np.ndarray, protos: np.ndarray, *, distance: bool = False) -> np.ndarray:
    """Index of the nearest prototype (K, 3) for each point (N, 3), or that distance if asked."""
    # |x - p|^2 = |x|^2 - 2 x.p + |p|^2; |x|^2 is constant per row, so a matmul ranks prototypes.
    partial = (protos * protos).sum(axis=1) - 2.0 * points @ protos.T
    if not distance:
        return partial.argmin(axis=1)
    return np.sqrt(np.maximum(partial.min(axis=1) + (points * points).sum(axis=1), 0.0))


@dataclass(frozen=True)
class NamedColour:
    """One named colour and the share of (opaque) pixels it covers."""

    name: str
    share: float
    shade: Shade | None = None
    """The variant most of its pixels matched, e.g. "deep" for navy within "blue"."""


def name_colours(lab: np.ndarray, weights: np.ndarray, min_share: float = 0.02) -> tuple[NamedColour, ...]:
    """Name Lab pixels (N, 3) with weights (N,); colours above ``min_share``, largest first."""
    total = float(weights.sum())
    if total <= 0:
        return ()
    proto = nearest(lab, _proto_lab())
    # Weighted count per (name, shade) cell; the shade of a name is its heaviest cell.
    n_cells = len(COLOUR_NAMES) * len(_SHADE_CODES)
    cell = _PROTO_NAME[proto] * len(_SHADE_CODES) + _PROTO_SHADE[proto]
    cells = np.bincount(cell, weights=weights, minlength=n_cells).reshape(len(COLOUR_NAMES), -1)
    shares = cells.sum(axis=1) / total
    order = sorted(range(len(COLOUR_NAMES)), key=lambda i: (-shares[i], i))
    return tuple(
        NamedColour(COLOUR_NAMES[i], round(float(shares[i]), 4), _SHADE_CODES[int(cells[i].argmax())])
        for i in order
        if shares[i] >= min_share
    )

