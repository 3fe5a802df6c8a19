"""Style looks: renderers that turn a composed scene into a watercolor, a neon sign, pixel art...

Each look is a function ``(image, ctx) -> image`` (see :mod:`.context`); :data:`LOOKS` names them
for people and :data:`RENDERERS` maps the same keys to the functions.
"""

from __future__ import annotations

from .context import Look, LookContext
from .flat import flat_vector, low_poly, pixel_art
from .line import blueprint, ink_sketch, neon
from .paint import oil_paint, pastel, watercolor
from .photo import photo

RENDERERS: dict[str, Look] = {
    "photo": photo,
    "watercolor": watercolor,
    "oil-paint": oil_paint,
    "pastel": pastel,
    "ink-sketch": ink_sketch,
    "neon": neon,
    "blueprint": blueprint,
    "pixel-art": pixel_art,
    "flat-vector": flat_vector,
    "low-poly": low_poly,
}
"""Look key -> renderer."""

LOOKS: dict[str, str] = {
    "photo": "Photo",
    "watercolor": "Watercolor",
    "oil-paint": "Oil Paint",
    "pastel": "Pastel",
    "ink-sketch": "Ink Sketch",
    "neon": "Neon",
    "blueprint": "Blueprint",
    "pixel-art": "Pixel Art",
    "flat-vector": "Flat Vector",
    "low-poly": "Low Poly",
}
"""Look key -> human title; the sandbox seeds its style catalogue from this."""

DEFAULT_LOOK = "photo"
"""The look drawn when a request names no style."""

__all__ = ["DEFAULT_LOOK", "LOOKS", "RENDERERS", "Look", "LookContext"]
