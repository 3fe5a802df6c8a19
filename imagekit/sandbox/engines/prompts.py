"""Text to prompt: a deterministic enhancer that expands a user's text in a style's vocabulary.

The same text and look always give the same prompt: every choice is drawn from a hash of the text,
never from a random source. The result keeps the user's words first and stays within the
interface's 1,200-character prompt limit.
"""

from __future__ import annotations

import hashlib

MAX_PROMPT = 1200

COMPOSITION = ("centred composition", "rule-of-thirds framing", "wide establishing shot", "close-up view",
               "low-angle view", "balanced symmetric layout", "layered foreground and background")
LIGHTING = ("soft morning light", "golden-hour glow", "diffuse overcast light", "dramatic rim lighting",
            "gentle ambient light", "high-contrast side light", "warm evening light")
DETAIL = ("fine detail", "crisp edges", "rich texture", "clean shapes", "subtle gradients",
          "harmonious colour palette", "high resolution")

LOOK_VOCABULARY: dict[str, tuple[str, ...]] = {
    "photo": ("photorealistic", "natural colours", "shallow depth of field", "35mm lens", "film grain"),
    "watercolor": ("watercolor painting", "soft bleeding edges", "paper texture", "loose washes", "pigment blooms"),
    "oil-paint": ("oil painting", "visible brush strokes", "impasto texture", "canvas weave", "rich glazes"),
    "pastel": ("pastel tones", "soft chalk texture", "light airy palette", "gentle shading", "dreamy mood"),
    "ink-sketch": ("ink sketch", "cross-hatching", "confident line work", "monochrome", "sketchbook feel"),
    "neon": ("neon glow", "dark backdrop", "vivid magenta and cyan", "light trails", "synthwave mood"),
    "blueprint": ("technical blueprint", "white line drawing", "cyan paper", "measurement marks", "precise drafting"),
    "pixel-art": ("pixel art", "limited palette", "crisp pixels", "retro game sprite", "dithered shading"),
    "flat-vector": ("flat vector illustration", "bold outlines", "solid colour fills", "minimal shading",
                    "geometric simplicity"),
    "low-poly": ("low-poly render", "faceted triangles", "flat-shaded polygons", "geometric abstraction",
                 "crystalline surfaces"),
}
"""Phrases each look adds to an enhanced prompt (also usable by captions)."""


def _pick(options: tuple[str, ...], digest: bytes, slot: int) -> str:
    return options[digest[slot] % len(options)]


def enhance_prompt(text: str, look: str | None = None, look_label: str | None = None) -> str:
    """The user's text, expanded with composition, light, detail and the look's vocabulary."""
    subject = " ".join(text.split())
    if not subject:
        raise ValueError("the text is empty")
    digest = hashlib.sha256(f"{subject}\x00{look}".encode()).digest()
    parts = [subject, _pick(COMPOSITION, digest, 0), _pick(LIGHTING, digest, 1), _pick(DETAIL, digest, 2)]
    vocabulary = LOOK_VOCABULARY.get(look or "", ())
    if vocabulary:
        start = digest[3] % len(vocabulary)
        parts += [vocabulary[(start + i) % len(vocabulary)] for i in range(3)]
    elif look_label:
        parts.append(f"in the style of {look_label}")
    prompt = ", ".join(dict.fromkeys(parts))
    return prompt if len(prompt) <= MAX_PROMPT else prompt[:MAX_PROMPT].rsplit(" ", 1)[0]
