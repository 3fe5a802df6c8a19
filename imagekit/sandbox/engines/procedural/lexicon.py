"""Reading a prompt: which words pick the palette and which pick the composition.

The tables are deliberately small and explicit: a word either names a theme (a whole palette
such as ``sunset``), a hue (a tint such as ``red``) or a motif (a piece of composition such as
``mountains``). Words named in the negative prompt are taken out before anything is drawn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

THEME_WORDS: dict[str, str] = {
    "day": "day", "sunny": "day", "noon": "day", "summer": "day", "bright": "day",
    "sunset": "sunset", "sunrise": "sunset", "dusk": "sunset", "dawn": "sunset", "evening": "sunset",
    "night": "night", "midnight": "night", "moon": "night", "moonlit": "night", "starry": "night",
    "dark": "night", "stars": "night",
    "golden": "golden", "gold": "golden", "warm": "golden",
    "forest": "forest", "jungle": "forest", "woods": "forest", "moss": "forest",
    "ocean": "ocean", "sea": "ocean", "underwater": "ocean", "lake": "ocean", "tropical": "ocean",
    "desert": "desert", "sand": "desert", "dune": "desert", "dunes": "desert", "canyon": "desert",
    "autumn": "autumn", "fall": "autumn", "harvest": "autumn",
    "winter": "winter", "snow": "winter", "snowy": "winter", "ice": "winter", "frozen": "winter",
    "spring": "spring", "blossom": "spring", "cherry": "spring",
    "storm": "storm", "stormy": "storm", "rain": "storm", "fog": "storm", "foggy": "storm",
}
"""Words that choose a whole palette (sky, terrain, accent) by mood or place."""

HUE_WORDS: dict[str, str] = {
    "red": "red", "crimson": "red", "scarlet": "red", "ruby": "red",
    "orange": "orange", "amber": "orange", "copper": "orange",
    "yellow": "yellow", "lemon": "yellow",
    "green": "green", "emerald": "green", "lime": "green", "olive": "green",
    "teal": "teal", "cyan": "teal", "turquoise": "teal", "aqua": "teal",
    "blue": "blue", "azure": "blue", "navy": "blue", "sapphire": "blue", "cobalt": "blue",
    "purple": "purple", "violet": "purple", "lavender": "purple", "indigo": "purple",
    "pink": "pink", "magenta": "pink", "rose": "pink", "fuchsia": "pink",
    "brown": "brown", "chocolate": "brown",
    "grey": "grey", "gray": "grey", "silver": "grey", "monochrome": "grey",
    "white": "white", "black": "black",
}
"""Words that tint the palette toward one hue (first one tints, second picks the accent)."""

MOTIF_WORDS: dict[str, str] = {
    "mountain": "mountains", "mountains": "mountains", "peak": "mountains", "peaks": "mountains",
    "alps": "mountains", "volcano": "mountains", "cliff": "mountains", "cliffs": "mountains",
    "hill": "hills", "hills": "hills", "valley": "hills", "meadow": "hills", "field": "hills",
    "sea": "waves", "ocean": "waves", "wave": "waves", "waves": "waves", "beach": "waves",
    "lake": "waves", "water": "waves", "river": "waves", "coast": "waves", "harbor": "waves",
    "desert": "dunes", "dune": "dunes", "dunes": "dunes", "sand": "dunes",
    "city": "skyline", "skyline": "skyline", "building": "skyline", "buildings": "skyline",
    "town": "skyline", "street": "skyline", "downtown": "skyline", "skyscraper": "skyline",
    "forest": "trees", "tree": "trees", "trees": "trees", "woods": "trees", "pine": "trees",
    "jungle": "trees",
    "sky": "clouds", "cloud": "clouds", "clouds": "clouds", "cloudy": "clouds",
    "portrait": "portrait", "face": "portrait", "person": "portrait", "man": "portrait",
    "woman": "portrait", "girl": "portrait", "boy": "portrait", "selfie": "portrait",
    "flower": "flowers", "flowers": "flowers", "rose": "flowers", "tulip": "flowers",
    "garden": "flowers", "bloom": "flowers", "blossom": "flowers", "daisy": "flowers",
    "cat": "cat", "cats": "cat", "kitten": "cat", "kitty": "cat",
    "sun": "sun", "sunny": "sun", "sunset": "sun", "sunrise": "sun",
    "moon": "moon", "moonlit": "moon",
    "star": "stars", "stars": "stars", "starry": "stars", "galaxy": "stars",
    "blob": "blob", "creature": "blob", "monster": "blob", "robot": "blob", "object": "blob",
}
"""Words that add a piece of composition; each motif has one drawing routine."""

BACKDROPS = ("mountains", "hills", "waves", "dunes")
"""Motifs that form the land behind everything; a scene without one gets one from the seed."""

_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Reading:
    """What a prompt asks for, in the order its words appear, minus what the negative bans."""

    themes: tuple[str, ...]
    hues: tuple[str, ...]
    motifs: tuple[str, ...]
    banned_hues: frozenset[str]
    banned_motifs: frozenset[str]


def words(text: str) -> list[str]:
    """Lower-case words of a text (letters only)."""
    return _WORD.findall(text.lower())


def _collect(tokens: list[str], table: dict[str, str], banned: frozenset[str]) -> tuple[str, ...]:
    """Values named by ``tokens`` in first-seen order, without duplicates or banned ones."""
    found = dict.fromkeys(table[t] for t in tokens if t in table and table[t] not in banned)
    return tuple(found)


def read_prompt(prompt: str, negative: str = "") -> Reading:
    """Read the prompt's themes, hues and motifs, dropping those the negative prompt names."""
    tokens, neg = words(prompt), words(negative)
    banned_hues = frozenset(HUE_WORDS[t] for t in neg if t in HUE_WORDS)
    banned_motifs = frozenset(MOTIF_WORDS[t] for t in neg if t in MOTIF_WORDS)
    banned_themes = frozenset(THEME_WORDS[t] for t in neg if t in THEME_WORDS)
    return Reading(
        themes=_collect(tokens, THEME_WORDS, banned_themes),
        hues=_collect(tokens, HUE_WORDS, banned_hues),
        motifs=_collect(tokens, MOTIF_WORDS, banned_motifs),
        banned_hues=banned_hues,
        banned_motifs=banned_motifs,
    )
