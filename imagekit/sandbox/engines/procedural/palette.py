"""Palettes: the colour roles a scene is painted with, and the colour operations around them.

A :class:`Palette` names the role of each colour in a scene (sky, far hills, ground, accent...).
It comes from a collection's colours, or from the prompt's theme and hue words; negative hue
words desaturate matching roles here and matching pixels at the end (:func:`suppress_hues`).
"""

from __future__ import annotations

import colorsys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace

import cv2
import numpy as np

from ..base import RGB
from .lexicon import Reading

Colour = tuple[float, float, float]


@dataclass(frozen=True)
class Palette:
    """Colour roles of a scene, RGB in 0..255."""

    sky_top: Colour
    sky_bottom: Colour
    far: Colour
    near: Colour
    ground: Colour
    accent: Colour
    light: Colour
    dark: Colour

    def map(self, fn: Callable[[str, Colour], Colour]) -> Palette:
        """A palette with ``fn(role_name, colour)`` applied to every role."""
        return replace(self, **{f.name: fn(f.name, getattr(self, f.name)) for f in fields(self)})


def _p(*rgb: RGB) -> Palette:
    return Palette(*(_colour(c) for c in rgb))


def _colour(values: Iterable[float]) -> Colour:
    """Three floats as a Colour (the first three of ``values``)."""
    r, g, b = (float(v) for v in list(values)[:3])
    return r, g, b


THEMES: dict[str, Palette] = {
    "day": _p((64, 128, 204), (178, 214, 240), (122, 150, 186), (78, 116, 96), (96, 146, 78),
              (232, 116, 58), (255, 246, 214), (34, 42, 52)),
    "sunset": _p((58, 42, 112), (252, 156, 84), (156, 86, 122), (84, 46, 88), (52, 30, 58),
                 (255, 206, 96), (255, 226, 150), (30, 18, 40)),
    "night": _p((12, 16, 42), (44, 56, 108), (38, 44, 82), (24, 26, 52), (16, 20, 38),
                (246, 222, 140), (236, 240, 255), (6, 8, 18)),
    "golden": _p((236, 176, 92), (255, 228, 160), (196, 140, 90), (128, 84, 48), (150, 110, 50),
                 (180, 60, 40), (255, 244, 200), (60, 36, 20)),
    "forest": _p((104, 156, 190), (212, 230, 222), (84, 128, 100), (40, 84, 56), (52, 100, 48),
                 (220, 180, 60), (240, 250, 220), (18, 36, 24)),
    "ocean": _p((30, 100, 170), (150, 210, 230), (70, 140, 170), (20, 80, 120), (226, 206, 160),
                (250, 120, 90), (255, 250, 230), (10, 30, 60)),
    "desert": _p((96, 150, 206), (250, 222, 176), (214, 150, 100), (196, 120, 70), (230, 184, 120),
                 (90, 130, 80), (255, 240, 200), (90, 50, 30)),
    "autumn": _p((120, 150, 190), (246, 214, 170), (170, 100, 70), (150, 64, 34), (120, 70, 30),
                 (230, 120, 30), (255, 230, 180), (50, 24, 14)),
    "winter": _p((104, 146, 200), (210, 226, 242), (140, 162, 196), (92, 116, 154), (236, 242, 250),
                 (60, 90, 140), (255, 255, 255), (40, 54, 76)),
    "spring": _p((150, 200, 240), (240, 236, 246), (170, 206, 170), (110, 176, 110), (140, 200, 110),
                 (248, 150, 186), (255, 250, 240), (50, 80, 60)),
    "storm": _p((60, 66, 80), (140, 146, 156), (90, 96, 108), (56, 62, 70), (70, 80, 72),
                (220, 220, 180), (230, 232, 240), (20, 22, 28)),
}
"""Whole palettes chosen by theme words."""

DEFAULT_THEMES = ("day", "sunset", "golden", "night", "spring")
"""Themes a prompt without theme words draws from (by seed)."""

HUE_TINTS: dict[str, Colour] = {
    "red": (210, 40, 48), "orange": (240, 130, 40), "yellow": (246, 214, 60),
    "green": (60, 170, 80), "teal": (30, 170, 170), "blue": (40, 90, 210),
    "purple": (130, 70, 190), "pink": (240, 110, 170), "brown": (130, 80, 40),
}
"""Tint colour of each chromatic hue word."""

HUE_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "red": ((0, 9), (168, 180)), "orange": ((8, 21),), "brown": ((8, 21),), "yellow": ((20, 36),),
    "green": ((35, 82),), "teal": ((80, 100),), "blue": ((98, 130),), "purple": ((128, 150),),
    "pink": ((145, 172),),
}
"""OpenCV hue intervals (0..180) covered by each hue word, used to suppress negative hues."""

_SCENE_ROLES = ("sky_top", "sky_bottom", "far", "near", "ground")


def _hls(c: Colour) -> tuple[float, float, float]:
    return colorsys.rgb_to_hls(*(v / 255.0 for v in c))


def _rgb(h: float, light: float, s: float) -> Colour:
    return _colour(round(v * 255.0, 2) for v in colorsys.hls_to_rgb(h, light, s))


def _mix(a: Colour, b: Colour, t: float) -> Colour:
    return _colour(x + (y - x) * t for x, y in zip(a, b))


def tint(palette: Palette, hue: str, strength: float = 0.55) -> Palette:
    """Pull the scene roles toward a hue word (keeping each role's lightness); set the accent."""
    if hue in ("grey", "white", "black"):
        target = {"grey": None, "white": (255.0, 255.0, 255.0), "black": (0.0, 0.0, 0.0)}[hue]

        def neutral(name: str, c: Colour) -> Colour:
            if target is None:
                h, light, s = _hls(c)
                return _rgb(h, light, s * 0.15)
            return _mix(c, target, 0.45 if name in _SCENE_ROLES else 0.2)

        return palette.map(neutral)
    th, _, ts = _hls(HUE_TINTS[hue])

    def pull(name: str, c: Colour) -> Colour:
        if name not in _SCENE_ROLES:
            return c
        _, light, s = _hls(c)
        # The sky takes less of the tint than the land: a "green lake" keeps a believable sky.
        pull_by = strength * (0.6 if name.startswith("sky") else 1.0)
        return _mix(c, _rgb(th, light, max(s, 0.45, ts * 0.7)), pull_by)

    return replace(palette.map(pull), accent=HUE_TINTS[hue])


def _in_ranges(hue: float, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= hue <= hi for lo, hi in ranges)


def drop_hues(palette: Palette, banned: frozenset[str]) -> Palette:
    """Desaturate every role whose hue a negative word names."""
    ranges = tuple(r for name in banned if name in HUE_RANGES for r in HUE_RANGES[name])
    if not ranges:
        return palette

    def drop(_: str, c: Colour) -> Colour:
        h, light, s = _hls(c)
        return _rgb(h, light, s * 0.1) if s > 0.15 and _in_ranges(h * 180.0, ranges) else c

    return palette.map(drop)


def from_colours(colours: Sequence[RGB]) -> Palette:
    """Assign a collection's colours to roles: dark ones low in the scene, light ones in the sky."""
    cols = [_colour(c) for c in colours]
    if not cols:
        raise ValueError("a palette needs at least one colour")
    ramp = sorted(cols, key=lambda c: 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2])

    def at(t: float) -> Colour:
        return ramp[round(t * (len(ramp) - 1))]

    accent = max(cols, key=lambda c: _hls(c)[2] * (1 - abs(_hls(c)[1] - 0.5)))
    return Palette(sky_top=at(0.75), sky_bottom=at(0.9), far=at(0.55), near=at(0.3), ground=at(0.15),
                   accent=accent, light=at(1.0), dark=at(0.0))


SKY_THEMES = frozenset({"day", "sunset", "night", "golden", "storm"})
"""Themes that describe light and sky; the others (forest, ocean...) describe the land."""


def _under_sky(land: Palette, sky: str) -> Palette:
    """A land palette lit by a sky theme: the sky's colours above, its light and shade on the land."""
    lit = THEMES[sky]
    shade = {"night": 0.6, "sunset": 0.35, "storm": 0.35}.get(sky, 0.1)
    return replace(land, sky_top=lit.sky_top, sky_bottom=lit.sky_bottom, light=lit.light,
                   far=_mix(_mix(land.far, lit.far, 0.5), lit.dark, shade * 0.5),
                   near=_mix(land.near, lit.dark, shade), ground=_mix(land.ground, lit.dark, shade))


def choose(reading: Reading, rng: np.random.Generator, colours: Sequence[RGB] | None = None) -> Palette:
    """The scene palette: a collection's colours, else theme plus hue tints, minus banned hues."""
    if colours:
        return from_colours(colours)
    sky = next((t for t in reading.themes if t in SKY_THEMES), None)
    land = next((t for t in reading.themes if t not in SKY_THEMES), None)
    if sky is None and land is None:
        # A named colour should show, so a prompt with one is not left to a night theme.
        themes = [t for t in DEFAULT_THEMES if not (reading.hues and t == "night")]
        sky = themes[int(rng.integers(len(themes)))]
    palette = THEMES[land or sky or DEFAULT_THEMES[0]]
    if land and sky:
        palette = _under_sky(palette, sky)
    for i, hue in enumerate(reading.hues[:2]):
        palette = tint(palette, hue, 0.55 if i == 0 else 0.2)
    return drop_hues(palette, reading.banned_hues)


def suppress_hues(image: np.ndarray, banned: frozenset[str]) -> np.ndarray:
    """Desaturate pixels whose hue a negative word names (uint8 RGB in, uint8 RGB out)."""
    weight = np.zeros(256, np.float32)
    for name in banned:
        for lo, hi in HUE_RANGES.get(name, ()):
            weight[lo:hi + 1] = 1.0
    if not weight.any():
        return image
    # Soften the range borders so suppressed areas do not end in a hard hue seam.
    weight = np.maximum(weight, np.convolve(weight, np.ones(5, np.float32) / 5, mode="same"))
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
    keep = (1.0 - 0.88 * weight)[hsv[..., 0]]
    hsv[..., 1] = (hsv[..., 1] * keep).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
