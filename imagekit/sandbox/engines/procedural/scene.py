"""Composition: turn a prompt reading into layered drawing steps on one canvas.

Land-type motifs (mountains, hills, dunes, sea) form the backdrop; city, trees and flowers stand on
it; a cat or a blob is the subject in front; ``portrait`` switches to a figure on bokeh. A prompt
that names none of these gets a backdrop (and sometimes a subject) chosen by its seed.
"""

from __future__ import annotations

import numpy as np

from ..base import CheckFn
from . import backdrop, portrait, subjects
from .lexicon import BACKDROPS, Reading
from .noise import noise1d
from .palette import Palette
from .seeding import stream
from .stage import Stage

_STANDING = {"skyline": subjects.skyline, "trees": subjects.trees, "flowers": subjects.flowers}
_SUBJECTS = {"cat": subjects.cat, "blob": subjects.blob}
_ON_LAND = {"trees", "flowers", "cat", "blob"}
"""Motifs that need land under them: with a sea backdrop they get a shore in front of the water."""


def plan(reading: Reading, rng: np.random.Generator) -> tuple[str, ...]:
    """The motifs to draw: the prompt's, plus a seed-chosen backdrop (and subject) when it names none."""
    motifs = list(reading.motifs)
    if "portrait" in motifs:
        return tuple(motifs)
    allowed = [m for m in BACKDROPS if m not in reading.banned_motifs]
    if allowed and not any(m in BACKDROPS for m in motifs):
        # Things standing in the scene look best on gentle land; a bare prompt may get any backdrop.
        gentle = "hills" in allowed and set(motifs) & (_ON_LAND | {"skyline"})
        motifs.append("hills" if gentle else allowed[int(rng.integers(len(allowed)))])
    if not reading.motifs and "blob" not in reading.banned_motifs and rng.random() < 0.5:
        motifs.append("blob")
    return tuple(motifs)


def compose(reading: Reading, palette: Palette, h: int, w: int, key: bytes, check: CheckFn) -> np.ndarray:
    """Draw the scene a reading describes; uint8 RGB (h, w, 3)."""
    return compose_with_subject(reading, palette, h, w, key, check)[0]


def compose_with_subject(reading: Reading, palette: Palette, h: int, w: int, key: bytes,
                         check: CheckFn) -> tuple[np.ndarray, np.ndarray | None]:
    """The scene, and where its subject (a cat, a blob, a portrait's figure) was drawn: a bool
    (h, w) mask, or None for a scene without one. The engine knows what it drew, so background
    removal of its own images can be exact."""
    rng = stream(key, "plan")
    motifs = plan(reading, rng)
    land = next((m for m in motifs if m in BACKDROPS), None)
    low = land == "waves" or "skyline" in motifs
    horizon = round(h * (rng.uniform(0.5, 0.6) if low else rng.uniform(0.56, 0.68)))
    shore = land == "waves" and bool(set(motifs) & _ON_LAND)
    floor = round(horizon + (h - horizon) * 0.4) if shore else horizon
    st = Stage(h=h, w=w, horizon=horizon, floor=floor, palette=palette, key=key, check=check)
    if "portrait" in motifs:
        canvas = portrait.backdrop(st)
        return canvas, _drawn(canvas, lambda: portrait.figure(canvas, st))
    canvas = backdrop.sky(st)
    check()
    sun_x = _sky_bodies(canvas, st, motifs, reading)
    if "clouds" in motifs or (not st.night and "clouds" not in reading.banned_motifs and rng.random() < 0.35):
        backdrop.clouds(canvas, st)
    check()
    if land == "waves":
        backdrop.sea(canvas, st, sun_x)
        if shore:
            edge = floor + (noise1d(st.rng("shore"), w, 2.0 * w / st.unit, 3) - 0.5) * (h - horizon) * 0.15
            backdrop.ground(canvas, st, edge)
    elif land is not None:
        backdrop.ridges(canvas, st, land)
    else:
        backdrop.ground(canvas, st, horizon)
    # Back to front, whatever order the prompt named them in.
    subject: np.ndarray | None = None
    for motif, draw in (_STANDING | _SUBJECTS).items():
        if motif in motifs:
            check()
            if motif in _SUBJECTS:
                drawn = _drawn(canvas, lambda draw=draw: draw(canvas, st))
                subject = drawn if subject is None else subject | drawn
            else:
                draw(canvas, st)
    return canvas, subject


def _drawn(canvas: np.ndarray, draw) -> np.ndarray:
    """Run ``draw`` on ``canvas``; the pixels it changed (bool (h, w))."""
    before = canvas.copy()
    draw()
    return np.any(canvas != before, axis=2)


def _sky_bodies(canvas: np.ndarray, st: Stage, motifs: tuple[str, ...], reading: Reading) -> float | None:
    """Sun, or moon and stars, as the sky and the prompt ask; returns the sun's x for reflections."""
    banned = reading.banned_motifs
    night = (st.night or "moon" in motifs or "stars" in motifs) and "sun" not in motifs
    if night:
        if "stars" not in banned:
            backdrop.stars(canvas, st)
        if "moon" not in banned:
            backdrop.celestial(canvas, st, "moon")
        return None
    if "sun" in banned:
        return None
    return backdrop.celestial(canvas, st, "sun")
