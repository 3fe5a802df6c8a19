"""Pixel checks for background removal, vectorize and reimagine (the engines, without HTTP)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from imagekit.sandbox.engines.edits import reimagine, remove_background, vectorize
from imagekit.sandbox.errors import Cancelled


def never() -> None:
    pass


def cancel_after(calls: int):
    seen = {"n": 0}

    def check() -> None:
        seen["n"] += 1
        if seen["n"] > calls:
            raise Cancelled("test")

    return check, seen


def textured(shape, base, seed) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = cv2.GaussianBlur(rng.normal(0, 12, shape).astype(np.float32), (0, 0), 2)
    return np.clip(np.array(base, np.float32) + noise, 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def scene() -> tuple[np.ndarray, np.ndarray]:
    """A textured orange blob on a textured blue-grey backdrop, and its true mask."""
    image = textured((512, 512, 3), (70, 90, 120), 1)
    truth = np.zeros((512, 512), np.uint8)
    cv2.ellipse(truth, (250, 270), (130, 170), 15, 0, 360, 1, -1)
    cv2.circle(truth, (360, 150), 60, 1, -1)
    subject = textured((512, 512, 3), (230, 140, 40), 2)
    image[truth == 1] = subject[truth == 1]
    return image, truth.astype(bool)


def test_remove_background_separates_a_synthetic_foreground(scene):
    image, truth = scene
    result = remove_background(image, never)
    assert result.shape == (512, 512, 4) and result.dtype == np.uint8
    found = result[..., 3] >= 128
    assert (found & truth).sum() / (found | truth).sum() >= 0.9
    assert np.array_equal(result[..., :3], image)


def test_remove_background_is_deterministic_and_cancellable(scene):
    image, _ = scene
    assert np.array_equal(remove_background(image, never), remove_background(image, never))
    check, seen = cancel_after(2)
    with pytest.raises(Cancelled):
        remove_background(image, check)
    assert seen["n"] == 3


def test_vectorize_renders_back_close_to_the_source(scene):
    image, _ = scene
    result = vectorize(image, never)
    assert '<svg' in result.svg and 'width="512" height="512"' in result.svg and "viewBox" in result.svg
    assert result.preview.shape == image.shape
    assert np.abs(result.preview.astype(int) - image.astype(int)).mean() < 12
    assert len(result.svg) < 2_000_000


def test_vectorize_keeps_the_original_size_when_tracing_a_smaller_copy():
    image = textured((1200, 1000, 3), (200, 200, 60), 3)
    result = vectorize(image, never)
    assert 'width="1000" height="1200"' in result.svg and result.preview.shape == (1200, 1000, 3)


def test_reimagine_strength_and_determinism(scene):
    image, _ = scene
    subtle, strong = reimagine(image, "subtle", 5, never), reimagine(image, "strong", 5, never)
    distance = lambda a: np.abs(a.astype(int) - image.astype(int)).mean()  # noqa: E731
    assert 0 < distance(subtle) < distance(strong)
    assert np.array_equal(subtle, reimagine(image, "subtle", 5, never))
    assert not np.array_equal(strong, reimagine(image, "strong", 6, never))
    related = np.corrcoef(cv2.resize(strong, (32, 32)).ravel(), cv2.resize(image, (32, 32)).ravel())[0, 1]
    assert related > 0.5


def test_reimagine_checks_inside_its_band_loop():
    image = textured((1024, 1024, 3), (120, 120, 120), 4)
    check, seen = cancel_after(2)
    with pytest.raises(Cancelled):
        reimagine(image, "strong", 1, check)
    assert seen["n"] == 3
