"""The stage a scene is drawn on: canvas size, horizon, palette and per-layer random streams."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import CheckFn
from .palette import Palette
from .seeding import stream


@dataclass(frozen=True)
class Stage:
    """Geometry and colours every layer of one scene shares."""

    h: int
    w: int
    horizon: int
    """Row of the horizon (sky above, land or sea below)."""
    floor: int
    """Top row of the land things stand on (below the horizon when a shore of water lies between)."""
    palette: Palette
    key: bytes
    """Digest of the scene's request; each layer derives its own stream from it."""
    check: CheckFn

    @property
    def unit(self) -> int:
        """Length scale of motifs: the short side, so shapes keep proportions at any aspect ratio."""
        return min(self.h, self.w)

    @property
    def night(self) -> bool:
        """Whether the sky is dark enough for a moon and stars instead of a sun."""
        r, g, b = self.palette.sky_top
        return 0.299 * r + 0.587 * g + 0.114 * b < 60

    def ground_row(self, depth: float) -> float:
        """The row at ``depth`` (0 = back, 1 = bottom edge) of the land things stand on."""
        return self.floor + (self.h - self.floor) * depth

    def rng(self, layer: str) -> np.random.Generator:
        """The random stream of one layer (independent of which other layers are drawn)."""
        return stream(self.key, layer)

    def count(self, per_unit_width: float, cap: int = 400) -> int:
        """How many of a repeated motif fit across the canvas width, capped for extreme ratios."""
        return max(1, min(cap, round(per_unit_width * self.w / self.unit)))
