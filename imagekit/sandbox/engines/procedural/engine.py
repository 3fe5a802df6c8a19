"""The procedural engine: prompt reading, palette, composition (or reference), then a style look."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..base import RGB, CheckFn, GenerationRequest, never_cancelled
from .lexicon import read_prompt
from .looks import DEFAULT_LOOK, LOOKS, RENDERERS, LookContext
from .palette import choose, suppress_hues
from .quantize import snap
from .reference import as_rgb, variation
from .scene import compose, compose_with_subject
from .seeding import digest, image_digest, palette_key, stream

MIN_SIDE, MAX_SIDE = 8, 4096
"""Accepted image sides in pixels."""

_MOOD_SIDE = 96
"""Side of the small scene rendered for its colours in reference mode."""


class ProceduralEngine:
    """Draws images procedurally: deterministic, model-free, fast; a stand-in for a diffusion model."""

    name = "procedural-v1"

    def looks(self) -> dict[str, str]:
        """Look keys mapped to their human titles."""
        return dict(LOOKS)

    def generate(self, request: GenerationRequest, check: CheckFn = never_cancelled) -> np.ndarray:
        """Draw one image: (height, width, 3) uint8 RGB, bitwise equal for equal requests."""
        return self.draw(request, check)[0]

    def draw(self, request: GenerationRequest,
             check: CheckFn = never_cancelled) -> tuple[np.ndarray, np.ndarray | None]:
        """One image as ``generate`` draws it, and where its subject is (``scene.compose_with_subject``;
        None for a scene without one, and for a variation of a reference picture)."""
        w, h = _side(request.width, "width"), _side(request.height, "height")
        look = request.style or DEFAULT_LOOK
        if look not in RENDERERS:
            raise ValueError(f"unknown look {look!r}; known: {', '.join(LOOKS)}")
        # The size and the look stay out of the key: the same prompt and seed keep their
        # composition across aspect ratios and styles.
        reference = None if request.reference is None else as_rgb(request.reference)
        colours = _colours(request.palette)
        key = digest(self.name, request.prompt, int(request.seed), palette_key(colours),
                     request.negative_prompt, image_digest(reference))
        reading = read_prompt(request.prompt, request.negative_prompt)
        palette = choose(reading, stream(key, "palette"), colours)
        check()
        subject = None
        if reference is None:
            scene, subject = compose_with_subject(reading, palette, h, w, key, check)
        else:
            mood = compose(reading, palette, _MOOD_SIDE, _MOOD_SIDE, key, check)
            scene = variation(reference, w, h, mood, stream(key, "reference"))
        check()
        out = RENDERERS[look](scene, LookContext(stream(key, f"look:{look}"), check))
        check()
        if colours:
            # Most of the way to the collection's colours: they dominate, shading survives.
            out = snap(out, np.asarray(colours, np.float32), 0.7)
        out = suppress_hues(out, reading.banned_hues)
        return np.ascontiguousarray(out, dtype=np.uint8), subject


def _colours(palette: Sequence[RGB] | None) -> list[RGB] | None:
    """Validate a collection palette: RGB triples of 0..255 (None or empty means no palette)."""
    if not palette:
        return None
    colours = []
    for colour in palette:
        rgb = tuple(int(v) for v in colour)
        if len(rgb) != 3 or not all(0 <= v <= 255 for v in rgb):
            raise ValueError(f"palette colours must be RGB triples of 0..255, got {colour!r}")
        colours.append(rgb)
    return colours


def _side(value: int, name: str) -> int:
    """Validate one side of the requested size."""
    side = int(value)
    if not MIN_SIDE <= side <= MAX_SIDE:
        raise ValueError(f"{name} must be between {MIN_SIDE} and {MAX_SIDE} pixels, got {value}")
    return side
