"""Image-to-prompt captions measured from the pixels themselves (no model, deterministic).

``describe`` measures colours, light, orientation, detail, the main subject and the layout;
``caption`` renders those facts as an English prompt plus the same prompt in the caller's
language (built from a Korean phrase table, not machine translation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .language import SUPPORTED_LANGUAGES, normalise_language, parse_accept_language
from .measure import Composition, ImageFacts, describe
from .palette import COLOUR_NAMES, NamedColour
from .phrases import render

__all__ = [
    "COLOUR_NAMES",
    "SUPPORTED_LANGUAGES",
    "Caption",
    "Composition",
    "ImageFacts",
    "NamedColour",
    "caption",
    "describe",
    "parse_accept_language",
]


@dataclass(frozen=True)
class Caption:
    """The imageToPrompt answer: ``captionPrompt`` and ``captionTPrompt``."""

    caption_prompt: str
    """English caption prompt."""
    caption_t_prompt: str
    """The same caption in the requested language (English again for "en")."""


def caption(image: np.ndarray, language: str = "en") -> Caption:
    """Caption an (H, W, 3) RGB or (H, W, 4) RGBA uint8 image in English and ``language``.

    ``language`` is a supported code or tag ("ko", "ko-KR"); anything else is a ValueError, so
    callers resolve headers with :func:`parse_accept_language` first.
    """
    lang = normalise_language(language)
    if lang is None:
        raise ValueError(f"unsupported caption language {language!r}; supported: {', '.join(SUPPORTED_LANGUAGES)}")
    facts = describe(image)
    english = render(facts, "en")
    return Caption(english, english if lang == "en" else render(facts, lang))
