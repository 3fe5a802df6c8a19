"""The deterministic text-to-prompt enhancer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from imagekit.sandbox.engines.generate import LOOKS
from imagekit.sandbox.engines.prompts import (
    COMPOSITIONS,
    LIGHTING,
    LOOK_VOCABULARY,
    MAX_PROMPT_CHARS,
    enhance_prompt,
)


def test_vocabulary_covers_every_look_of_the_engine() -> None:
    assert set(LOOK_VOCABULARY) == set(LOOKS)
    for phrases in LOOK_VOCABULARY.values():
        assert len(phrases) >= 4 and len(set(phrases)) == len(phrases)
    # Each look speaks its own language.
    all_phrases = [p for phrases in LOOK_VOCABULARY.values() for p in phrases]
    assert len(set(all_phrases)) == len(all_phrases)


def test_subject_comes_first_verbatim_then_more_phrases() -> None:
    text = "A lighthouse on a Rocky coast"
    prompt = enhance_prompt(text)
    assert prompt.startswith(text + ", ")
    assert len(prompt.split(", ")) >= 4
    assert any(c in prompt for c in COMPOSITIONS)
    assert enhance_prompt("  " + text + ". \n") == prompt  # outer space and a final full stop go


def test_same_text_gives_the_same_prompt_in_any_process() -> None:
    text = "a fox in the snow"
    assert enhance_prompt(text, "watercolor") == enhance_prompt(text, "watercolor")
    script = ("from imagekit.sandbox.engines.prompts import enhance_prompt;"
              f"print(enhance_prompt({text!r}, 'watercolor'))")
    env = {**os.environ, "PYTHONHASHSEED": "999"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == enhance_prompt(text, "watercolor")


def test_phrases_vary_with_the_text() -> None:
    prompts = {enhance_prompt(f"a small house number {i}").split(", ", 1)[1] for i in range(20)}
    assert len(prompts) >= 10


@pytest.mark.parametrize("look", list(LOOK_VOCABULARY))
def test_the_look_brings_its_vocabulary(look: str) -> None:
    prompt = enhance_prompt("a quiet harbour", look)
    used = [p for p in LOOK_VOCABULARY[look] if p in prompt]
    assert len(used) >= 2
    others = [p for k, v in LOOK_VOCABULARY.items() if k != look for p in v]
    assert not any(p in prompt for p in others)


def test_a_look_without_vocabulary_is_named_by_its_label() -> None:
    assert enhance_prompt("a castle", "user-style-17", "Dreamy Castle").endswith("Dreamy Castle style")
    assert "Photo style" not in enhance_prompt("a castle", "photo", "Photo")


def test_lighting_follows_the_mood_of_the_text() -> None:
    night = enhance_prompt("a harbour at night")
    assert any(p in night for p in LIGHTING["night"])
    warm = enhance_prompt("a harbour at sunset")
    assert any(p in warm for p in LIGHTING["warm"])


def test_phrases_the_text_already_says_are_not_repeated() -> None:
    prompt = enhance_prompt("a highly detailed fine detail intricate textures portrait")
    assert prompt.count("highly detailed") == 1 and prompt.count("intricate textures") == 1


@pytest.mark.parametrize("length", [1100, 1195, 1200, 5000])
def test_never_longer_than_the_service_limit(length: int) -> None:
    text = ("word " * length)[:length].strip()
    prompt = enhance_prompt(text, "oil-paint", "Oil Paint")
    assert len(prompt) <= MAX_PROMPT_CHARS
    assert prompt.startswith(text[:1000])


@pytest.mark.parametrize("text", ["", "   ", "\n\t", " . "])
def test_empty_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        enhance_prompt(text)
