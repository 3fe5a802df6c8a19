"""Captions must describe what is really in the pixels: synthetic images with known content."""

from __future__ import annotations

import dataclasses
import re
import typing

import numpy as np
import pytest

from imagekit.sandbox.engines import captions
from imagekit.sandbox.engines.captions import Caption, caption, describe, measure, parse_accept_language
from imagekit.sandbox.engines.captions.phrases import render

WHITE, RED, BLUE = (255, 255, 255), (220, 30, 40), (30, 80, 220)
HANGUL = re.compile("[\uac00-\ud7a3]")


def canvas(h: int, w: int, colour: tuple[int, int, int]) -> np.ndarray:
    return np.full((h, w, 3), colour, np.uint8)


def with_square(img: np.ndarray, box: tuple[int, int, int, int], colour: tuple[int, int, int]) -> np.ndarray:
    x, y, w, h = box
    out = img.copy()
    out[y : y + h, x : x + w, :3] = colour
    return out


def iou(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> float:
    ix = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def names(img: np.ndarray) -> list[str]:
    return [c.name for c in describe(img).colours]


@pytest.mark.parametrize(
    ("box", "horizontal", "vertical"),
    [((200, 200, 200, 200), "centre", "middle"), ((30, 220, 180, 180), "left", "middle"), ((420, 20, 150, 150), "right", "top")],
)
def test_red_square_on_white_is_found_where_placed(box, horizontal, vertical):
    facts = describe(with_square(canvas(600, 600, WHITE), box, RED))
    assert [c.name for c in facts.colours[:2]] == ["white", "red"]
    assert facts.subject_box is not None and iou(facts.subject_box, box) >= 0.8
    assert (facts.composition.horizontal, facts.composition.vertical) == (horizontal, vertical)
    assert facts.composition.symmetric == (horizontal == "centre")


def test_red_square_caption_names_its_colours_in_both_languages():
    result = caption(with_square(canvas(600, 900, WHITE), (350, 200, 200, 200), RED), "ko")
    assert "white and red" in result.caption_prompt
    assert "a centred red subject filling about a tenth of the frame" in result.caption_prompt
    assert "흰색과 빨간색이 주를 이루는" in result.caption_t_prompt
    assert "화면의 약 10분의 1을 차지하는 중앙의 빨간색 피사체" in result.caption_t_prompt


def test_small_subject_in_lower_left():
    img = with_square(canvas(900, 600, WHITE), (50, 650, 120, 120), (20, 30, 120))
    facts = describe(img)
    assert facts.subject_box is not None and iou(facts.subject_box, (50, 650, 120, 120)) >= 0.8
    assert facts.colours[1].name == "blue" and facts.colours[1].shade == "deep"
    result = caption(img, "ko")
    assert facts.subject_colour is not None and facts.subject_colour.name == "blue"
    assert "a small deep blue subject in the lower left" in result.caption_prompt
    assert "왼쪽 아래의 작은 진한 파란색 피사체" in result.caption_t_prompt


@pytest.mark.parametrize(
    ("value", "brightness", "en", "ko"),
    [(20, "dark", "dark", "어두운 분위기"), (75, "dim", "dim", "어둑한"), (200, "bright", "bright", "밝은 분위기")],
)
def test_brightness_words_follow_the_pixels(value, brightness, en, ko):
    img = canvas(300, 300, (value, value, value))
    assert describe(img).brightness == brightness
    result = caption(img, "ko")
    assert f", {en}," in result.caption_prompt
    assert ko in result.caption_t_prompt


def test_contrast_and_saturation_are_measured():
    halves = canvas(200, 200, (0, 0, 0))
    halves[:, 100:] = 255
    assert describe(halves).contrast == "high" and describe(halves).saturation == "monochrome"
    assert describe(canvas(200, 200, (128, 128, 128))).contrast == "low"
    assert describe(canvas(200, 200, (250, 20, 20))).saturation == "vivid"
    assert describe(canvas(200, 200, (160, 120, 100))).saturation == "muted"


@pytest.mark.parametrize(
    ("shape", "orientation", "en", "ko"),
    [
        ((900, 600), "portrait", "portrait image", "세로 이미지"),
        ((600, 900), "landscape", "landscape image", "가로 이미지"),
        ((512, 512), "square", "square image", "정사각형 이미지"),
        ((300, 1200), "panoramic", "panoramic image", "파노라마 이미지"),
        ((1200, 400), "tall", "tall image", "세로로 긴 이미지"),
    ],
)
def test_orientation_from_aspect_ratio(shape, orientation, en, ko):
    img = canvas(*shape, (40, 140, 60))
    assert describe(img).orientation == orientation
    result = caption(img, "ko")
    assert en in result.caption_prompt and ko in result.caption_t_prompt


def test_noise_is_busy_and_flat_is_smooth():
    noisy = np.random.default_rng(1).integers(0, 256, (256, 256, 3), dtype=np.uint8)
    flat = canvas(256, 256, (90, 120, 200))
    busy, smooth = describe(noisy), describe(flat)
    assert busy.edge_density > 0.16 and busy.detail == "busy"
    assert smooth.edge_density < 0.01 and smooth.detail == "minimal"
    assert "busy, dense texture" in caption(noisy).caption_prompt
    assert "smooth, minimal detail" in caption(flat).caption_prompt
    assert busy.subject_box is None and busy.composition.horizon is None


@pytest.mark.parametrize("ground", [(40, 120, 50), (245, 135, 25)], ids=["green", "isoluminant-orange"])
def test_horizon_between_sky_and_ground(ground):
    img = canvas(500, 800, (120, 170, 235))
    img[300:] = ground
    facts = describe(img)
    assert facts.composition.horizon == pytest.approx(0.6, abs=0.03)
    assert facts.subject_box is None and not facts.composition.symmetric
    result = caption(img, "ko")
    assert "clear horizon" in result.caption_prompt and "수평선" in result.caption_t_prompt


def test_smooth_gradient_is_not_a_subject():
    ramp = np.tile(np.linspace(0, 255, 800, dtype=np.float32)[None, :, None], (400, 1, 3)).astype(np.uint8)
    assert describe(ramp).subject_box is None


@pytest.mark.parametrize(
    ("colour", "name", "ko"),
    [
        ((220, 30, 35), "red", "빨간색"), ((245, 135, 25), "orange", "주황색"), ((250, 220, 40), "yellow", "노란색"),
        ((50, 170, 60), "green", "초록색"), ((20, 150, 145), "teal", "청록색"), ((40, 90, 225), "blue", "파란색"),
        ((135, 55, 175), "purple", "보라색"), ((235, 110, 170), "pink", "분홍색"), ((125, 75, 35), "brown", "갈색"),
        ((5, 5, 5), "black", "검은색"), ((250, 250, 250), "white", "흰색"), ((128, 128, 128), "grey", "회색"),
    ],
)  # fmt: skip
def test_solid_colours_are_named(colour, name, ko):
    img = canvas(64, 64, colour)
    assert names(img) == [name]
    result = caption(img, "ko")
    assert f"filled almost entirely with {name}" in result.caption_prompt
    assert f"거의 {ko}으로 채워진" in result.caption_t_prompt


def test_korean_caption_is_all_korean_and_english_echoes():
    img = with_square(canvas(400, 600, (20, 30, 120)), (250, 150, 100, 100), (250, 220, 40))
    ko = caption(img, "ko")
    assert HANGUL.search(ko.caption_t_prompt) and not re.search("[A-Za-z]", ko.caption_t_prompt)
    assert not HANGUL.search(ko.caption_prompt)
    en = caption(img, "en")
    assert en == Caption(ko.caption_prompt, ko.caption_prompt)
    assert caption(img, "ko-KR") == ko


def test_deterministic():
    img = np.random.default_rng(7).integers(0, 256, (300, 500, 3), dtype=np.uint8)
    img[100:200, 200:300] = RED
    first = caption(img, "ko")
    assert all(caption(img.copy(), "ko") == first for _ in range(3))
    assert describe(img) == describe(img.copy())


def test_rgba_uses_alpha_for_the_subject_and_ignores_hidden_pixels():
    rng = np.random.default_rng(3)
    img = np.zeros((400, 400, 4), np.uint8)
    img[..., :3] = rng.integers(0, 256, (400, 400, 3))  # garbage under transparent pixels
    img[100:300, 60:220] = (*BLUE, 255)
    facts = describe(img)
    assert facts.transparent
    assert names(img) == ["blue"]
    assert facts.subject_box is not None and iou(facts.subject_box, (60, 100, 160, 200)) >= 0.8
    assert facts.composition.horizontal == "left"
    result = caption(img, "ko")
    assert "transparent background" in result.caption_prompt and "투명한 배경" in result.caption_t_prompt


def test_opaque_rgba_matches_rgb():
    rgb = with_square(canvas(300, 300, WHITE), (100, 100, 100, 100), RED)
    rgba = np.dstack([rgb, np.full((300, 300), 255, np.uint8)])
    assert describe(rgba) == describe(rgb)


@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 500, 3), (7, 3, 4)])
def test_tiny_images_still_caption(shape):
    assert caption(np.zeros(shape, np.uint8), "ko").caption_t_prompt


@pytest.mark.parametrize(
    "bad", [np.zeros((10, 10), np.uint8), np.zeros((10, 10, 3), np.float32), np.zeros((0, 10, 3), np.uint8)]
)
def test_invalid_images_are_rejected(bad):
    with pytest.raises(ValueError):
        describe(bad)


def test_unsupported_language_is_rejected():
    with pytest.raises(ValueError, match="unsupported"):
        caption(canvas(10, 10, WHITE), "fr")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("ko-KR,ko;q=0.9,en;q=0.8", "ko"),
        ("fr, en;q=0.5", "en"),
        ("en-US,en;q=0.9,ko;q=0.8", "en"),
        ("en;q=0.8, ko", "ko"),
        ("fr-FR, de;q=0.7", "en"),
        ("ko;q=0, fr", "en"),
        ("KO", "ko"),
        ("*", "en"),
        ("ko;q=abc, en;q=0.1", "en"),
        ("en;q=0.5, ko;q=0.5", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_parse_accept_language(header, expected):
    assert parse_accept_language(header) == expected


def test_background_band_running_edge_to_edge_is_not_a_subject():
    img = canvas(400, 600, (40, 50, 60))
    img[:100] = (40, 80, 170)
    img[100:180] = (250, 170, 90)  # a glowing sky band between the top and the hills
    assert describe(img).subject_box is None


def _variants(base: captions.ImageFacts):
    """``base`` with each enumerated fact set to each of its values in turn."""
    for field in ("brightness", "contrast", "saturation", "orientation", "detail"):
        for value in typing.get_args(getattr(measure, field.capitalize())):
            yield dataclasses.replace(base, **{field: value})
    for name in captions.COLOUR_NAMES:
        for shade in (None, "deep", "light"):
            yield dataclasses.replace(base, colours=(captions.NamedColour(name, 1.0, shade),))
    for h in typing.get_args(measure.Horizontal):
        for v in typing.get_args(measure.Vertical):
            yield dataclasses.replace(base, composition=dataclasses.replace(base.composition, horizontal=h, vertical=v))


def test_every_measured_value_has_english_and_korean_words():
    base = describe(with_square(canvas(300, 300, WHITE), (100, 100, 100, 100), RED))
    for facts in _variants(base):
        assert not HANGUL.search(render(facts, "en"))
        assert not re.search("[A-Za-z]", render(facts, "ko"))


def test_public_names_are_exported_and_documented():
    for name in captions.__all__:
        obj = getattr(captions, name)
        assert isinstance(obj, tuple) or obj.__doc__, name
