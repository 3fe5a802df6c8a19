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
from .palette import Palette
from .seeding import stream
from .stage import Stage

_STANDING = {"skyline": subjects.skyline, "trees": subjects.trees, "flowers": subjects.flowers}
_SUBJECTS = {"cat": subjects.cat, "blob": subjects.blob}


def plan(reading: Reading, rng: np.random.Generator) -> tuple[str, ...]:
    """The motifs to draw: the prompt's, plus a seed-chosen backdrop (and subject) when it names none."""
    motifs = list(reading.motifs)
    allowed = [m for m in BACKDROPS if m not in reading.banned_motifs]
    if allowed and not any(m in BACKDROPS for m in motifs) and "portrait" not in motifs:
        # Standing motifs look best on gentle land; a bare prompt may get any backdrop.
        pick = "hills" if "hills" in allowed and set(motifs) & set(_STANDING) else allowed[int(rng.integers(len(allowed)))]
        motifs.append(pick)
    if not set(motifs) & (set(_STANDING) | set(_SUBJECTS) | {"portrait"}) and "blob" not in reading.banned_motifs:
        if rng.random() < 0.5:
            motifs.append("blob")
    return tuple(motifs)


def compose(reading: Reading, palette: Palette, h: int, w: int, key: bytes, check: CheckFn) -> np.ndarray:
    """Draw the scene a reading describes; uint8 RGB (h, w, 3)."""
    rng = stream(key, "plan")
    motifs = plan(reading, rng)
    land = next((m for m in motifs if m in BACKDROPS), None)
    low = land == "waves" or "skyline" in motifs
    horizon = round(h * rng.uniform(0.5, 0.6) if low else h * rng.uniform(0.56, 0.68))
    st = Stage(h=h, w=w, horizon=horizon, palette=palette, key=key, check=check)
    if "portrait" in motifs:
        canvas = portrait.backdrop(st)
        portrait.figure(canvas, st)
        return canvas
    canvas = backdrop.sky(st)
    check()
    sun_x = _sky_bodies(canvas, st, motifs, reading)
    if "clouds" in motifs or (not st.night and "clouds" not in reading.banned_motifs and rng.random() < 0.35):
        backdrop.clouds(canvas, st)
    check()
    if land == "waves":
        backdrop.sea(canvas, st, sun_x)
    elif land is not None:
        backdrop.ridges(canvas, st, land)
    else:
        backdrop.ground(canvas, st, horizon)
    # Back to front, whatever order the prompt named them in.
    for motif, draw in (_STANDING | _SUBJECTS).items():
        if motif in motifs:
            check()
            draw(canvas, st)
    return canvas


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
