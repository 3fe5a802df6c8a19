"""What a look (style renderer) receives besides the image."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...base import CheckFn


@dataclass(frozen=True)
class LookContext:
    """Randomness and cancellation for one look pass."""

    rng: np.random.Generator
    """The look's own random stream (textures, jitter, stroke directions)."""
    check: CheckFn
    """Raises :class:`~imagekit.sandbox.interface.errors.Cancelled` once the job was cancelled."""


Look = Callable[[np.ndarray, LookContext], np.ndarray]
"""A style renderer: uint8 RGB (H, W, 3) in, uint8 RGB of the same shape out."""


def unit(image: np.ndarray) -> int:
    """The short side: the scale strokes, lines and grids are measured in."""
    return min(image.shape[:2])
