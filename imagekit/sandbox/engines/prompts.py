"""Text-to-prompt: expand a short user text into a richer generation prompt, deterministically.

The user's text comes first, unchanged; then a composition, a lighting and detail phrases picked
by a hash of the text (so the same text always gets the same prompt, in any process); then words
from the chosen look's vocabulary. :data:`LOOK_VOCABULARY` is shared with whatever describes
images in the same looks (captions).
"""

from __future__ import annotations

import hashlib
import re

MAX_PROMPT_CHARS = 1200
"""The service's prompt limit; an enhanced prompt never exceeds it."""

LOOK_VOCABULARY: dict[str, tuple[str, ...]] = {
    "photo": ("photorealistic", "35mm photograph", "natural light", "shallow depth of field",
              "subtle film grain", "sharp focus"),
    "watercolor": ("watercolor painting", "soft bleeding edges", "wet-on-wet washes",
                   "textured cold-press paper", "transparent pigment layers", "loose brushwork"),
    "oil-paint": ("oil painting", "thick impasto brush strokes", "rich saturated pigments",
                  "visible canvas weave", "painterly texture", "layered glazes"),
    "pastel": ("soft pastel drawing", "muted pastel palette", "chalky texture", "pale airy tones",
               "gentle blended shading", "dreamy soft focus"),
    "ink-sketch": ("pen and ink sketch", "cross-hatching", "fine confident linework",
                   "black ink on cream paper", "hand-drawn contours", "hatched shadows"),
    "neon": ("neon glow", "glowing light tubes", "near-black background", "synthwave colours",
             "vivid magenta and cyan", "soft light bloom"),
    "blueprint": ("technical blueprint", "white linework on blue paper", "drafting grid",
                  "precise schematic lines", "engineering drawing", "title block in the corner"),
    "pixel-art": ("pixel art", "16-bit retro game style", "limited colour palette",
                  "crisp square pixels", "ordered dithering", "sprite-like shapes"),
    "flat-vector": ("flat vector illustration", "bold dark outlines", "flat colour fills",
                    "clean geometric shapes", "minimal shading", "poster style"),
    "low-poly": ("low poly art", "triangulated facets", "flat shaded polygons",
                 "geometric faceted surfaces", "crisp polygon edges", "stylised 3D render"),
}
"""Phrases that describe each look (keys match the procedural engine's look keys)."""

COMPOSITIONS = (
    "wide establishing shot", "rule of thirds composition", "centered symmetrical framing",
    "low angle view", "panoramic view", "close-up framing", "balanced layered depth",
    "elevated three-quarter view",
)
"""Ways to frame the subject."""

LIGHTING: dict[str, tuple[str, ...]] = {
    "night": ("cool moonlight", "soft ambient glow", "deep blue shadows", "starlit atmosphere"),
    "warm": ("warm golden hour light", "long soft shadows", "glowing backlight", "amber haze"),
    "day": ("soft diffused daylight", "crisp morning light", "gentle rim lighting",
            "bright even illumination", "dappled sunlight", "dramatic side lighting"),
}
"""Lighting phrases by the mood the text's words suggest."""

DETAILS = (
    "highly detailed", "intricate textures", "rich colour harmony", "clean composition",
    "atmospheric depth", "subtle gradients", "harmonious palette", "fine detail",
    "vivid yet natural colours", "strong focal point",
)
"""General quality and detail phrases."""

_MOOD_WORDS = {
    "night": {"night", "midnight", "moon", "moonlit", "stars", "starry", "dark", "nocturnal"},
    "warm": {"sunset", "sunrise", "dusk", "dawn", "golden", "evening", "autumn", "warm"},
}
_WORD = re.compile(r"[a-z0-9]+")
_TRAILING = " \t\r\n,;.:"


def _mood(words: set[str]) -> str:
    """Which lighting set fits the text: night, warm, or plain day."""
    return next((mood for mood, vocab in _MOOD_WORDS.items() if words & vocab), "day")


def _picker(text: str):
    """A deterministic chooser seeded by the text (no process-salted ``hash()``)."""
    stream = hashlib.blake2b(text.encode(), digest_size=64).digest()
    position = 0

    def pick(options: tuple[str, ...], count: int = 1) -> list[str]:
        nonlocal position
        start = stream[position % len(stream)] % len(options)
        position += 1
        return [options[(start + i) % len(options)] for i in range(min(count, len(options)))]

    return pick


def _fit(subject: str) -> str:
    """The subject, cut at a word boundary if it alone would exceed the prompt limit."""
    if len(subject) <= MAX_PROMPT_CHARS:
        return subject
    cut = subject[:MAX_PROMPT_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space > MAX_PROMPT_CHARS // 2 else cut).rstrip(_TRAILING)


def enhance_prompt(text: str, look: str | None = None, look_label: str | None = None) -> str:
    """Expand ``text`` into a richer prompt for ``look`` (a look key; ``look_label`` names a
    look without vocabulary here). Same arguments, same prompt; never over 1200 characters."""
    subject = text.strip().rstrip(_TRAILING) if text else ""
    if not subject:
        raise ValueError("text to enhance must not be empty")
    subject = _fit(subject)
    words = set(_WORD.findall(subject.lower()))
    pick = _picker(subject.lower())
    phrases = [*pick(COMPOSITIONS), *pick(LIGHTING[_mood(words)]), *pick(DETAILS, 2)]
    if look in LOOK_VOCABULARY:
        phrases += pick(LOOK_VOCABULARY[look], 3)
    elif label := look_label or look:
        phrases.append(f"{label.strip()} style")
    prompt = subject
    for phrase in phrases:
        # A phrase whose words the text already says adds nothing ("sunset, warm sunset light").
        if set(_WORD.findall(phrase.lower())) <= words:
            continue
        if len(prompt) + 2 + len(phrase) <= MAX_PROMPT_CHARS:
            prompt = f"{prompt}, {phrase}"
    return prompt
