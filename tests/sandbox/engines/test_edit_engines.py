"""Pixel-level checks of the edit engines (no HTTP): what changes, what must not, and how well."""

from __future__ import annotations

import importlib
import xml.etree.ElementTree as ET

import cv2
import numpy as np
import pytest

from imagekit.sandbox.engines.edits import (
    clean_up,
    cleanup_radius,
    enhance,
    fill,
    outpaint,
    reimagine,
    remove_background,
    upsize,
    vectorize,
)
from imagekit.sandbox.interface.errors import Cancelled, SandboxError

upscale_module = importlib.import_module("imagekit.sandbox.engines.edits.upscale")


def never() -> None:
    """A check that never cancels."""


def textured(shape: tuple[int, ...], base: tuple[int, int, int], seed: int, amount: float = 12.0) -> np.ndarray:
    """A flat colour with blurred noise grain, like a photographed surface."""
    rng = np.random.default_rng(seed)
    noise = cv2.GaussianBlur(rng.normal(0, amount, shape).astype(np.float32), (0, 0), 1.5)
    return np.clip(np.array(base, np.float32) + noise, 0, 255).astype(np.uint8)


def landscape(size: int = 256, seed: int = 0) -> np.ndarray:
    """Sky gradient over textured ground with a wavy horizon: structure, gradients and grain."""
    y = np.linspace(0, 1, size, dtype=np.float32)[:, None]
    image = np.stack([np.broadcast_to(a + b * y, (size, size)) for a, b in ((90, 80), (150, 60), (230, 10))], -1)
    horizon = (0.55 + 0.05 * np.sin(np.arange(size) / size * 7)) * size
    ground = np.arange(size)[:, None] > horizon[None, :]
    image[ground] = textured((size, size, 3), (70, 130, 55), seed, 18)[ground]
    image += np.random.default_rng(seed + 1).normal(0, 2, image.shape).astype(np.float32)
    return np.clip(image, 0, 255).astype(np.uint8)


def laplacian_variance(image: np.ndarray) -> float:
    return float(cv2.Laplacian(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), cv2.CV_64F).var())


def refused(call, status: int, name: str) -> None:
    with pytest.raises(SandboxError) as info:
        call()
    assert (info.value.status, info.value.name) == (status, name)


# --- enhance / upsize ---------------------------------------------------------------------------


@pytest.mark.parametrize("factor", [2, 4])
def test_enhance_is_sharper_than_plain_lanczos(factor):
    image = landscape(128)
    ours = enhance(image, factor, never)
    plain = cv2.resize(image, None, fx=factor, fy=factor, interpolation=cv2.INTER_LANCZOS4)
    assert ours.shape == plain.shape and ours.dtype == np.uint8
    assert laplacian_variance(ours) > 1.5 * laplacian_variance(plain)
    # Same picture: the difference is detail, not content.
    assert np.abs(cv2.resize(ours, (32, 32), interpolation=cv2.INTER_AREA).astype(int)
                  - cv2.resize(image, (32, 32), interpolation=cv2.INTER_AREA)).mean() < 2


def test_enhance_does_not_ring_on_a_step_edge():
    step = np.full((64, 64, 3), 64, np.uint8)
    step[:, 32:] = 192
    ours = enhance(step, 4, never)
    lanczos = cv2.resize(step, None, fx=4, fy=4, interpolation=cv2.INTER_LANCZOS4)
    assert lanczos.max() - 192 > 8  # the plain resize overshoots ...
    assert ours.min() >= 64 - 3 and ours.max() <= 192 + 3  # ... ours stays within the edge's values
    # and its ramp is steeper: fewer in-between columns.
    between = lambda a: int(((a[32, :, 0] > 72) & (a[32, :, 0] < 184)).sum())  # noqa: E731
    assert between(ours) < between(lanczos)


def test_enhance_tiles_join_without_seams(monkeypatch):
    image = landscape(160)
    whole = enhance(image, 2, never)
    monkeypatch.setattr(upscale_module, "TILE", 48)
    calls = []
    tiled = enhance(image, 2, lambda: calls.append(1))
    assert np.array_equal(whole, tiled)
    assert len(calls) >= 4 * 4  # one check per tile at least


def test_enhance_factors_and_limits():
    image = landscape(64)
    assert np.array_equal(enhance(image, 1, never), image)
    assert enhance(image, 8, never).shape == (512, 512, 3)
    refused(lambda: enhance(image, 3, never), 400, "invalid_scale_size")
    refused(lambda: enhance(np.zeros((8, 1100, 3), np.uint8), 8, never), 413, "image_too_large")


def test_upsize_is_a_plain_lanczos_2x():
    image = landscape(64)
    out = upsize(image, never)
    assert np.array_equal(out, cv2.resize(image, (128, 128), interpolation=cv2.INTER_LANCZOS4))
    refused(lambda: upsize(np.zeros((8, 5000, 3), np.uint8), never), 413, "image_too_large")


# --- outpaint -----------------------------------------------------------------------------------


def seam_ratio(out: np.ndarray, x: int, rows: slice) -> float:
    """Mean colour jump across column boundary ``x`` over the mean jump between neighbouring columns."""
    grey = out.astype(np.float32).mean(axis=2)[rows]
    jumps = np.abs(np.diff(grey, axis=1)).mean(axis=0)
    nearby = np.r_[jumps[x - 12 : x - 2], jumps[x + 1 : x + 11]]
    return float(jumps[x - 1] / nearby.mean())


def test_outpaint_keeps_the_original_exactly_and_leaves_no_seam():
    image = landscape(256)
    out = outpaint(image, (512, 384), (256, 256), (128, 64), 7, never)
    assert out.shape == (384, 512, 3)
    assert np.array_equal(out[64:320, 128:384], image)
    assert seam_ratio(out, 128, slice(64, 320)) < 1.5
    assert seam_ratio(out, 384, slice(64, 320)) < 1.5
    # The new ground continues the ground's colour; the new sky the sky's.
    assert np.abs(out[300:380, 20:100].mean((0, 1)) - image[200:256, :40].mean((0, 1))).max() < 20
    assert np.abs(out[5:40, 200:300].mean((0, 1)) - image[:20, 72:172].mean((0, 1))).max() < 20


def test_outpaint_with_a_negative_location_crops_the_original():
    image = landscape(256)
    out = outpaint(image, (320, 320), (256, 256), (-100, -40), 1, never)
    assert np.array_equal(out[:216, :156], image[40:, 100:])
    assert seam_ratio(out, 156, slice(0, 216)) < 1.5


def test_outpaint_places_a_resized_original_and_is_seeded():
    image = landscape(256)
    out = outpaint(image, (300, 300), (128, 128), (100, 90), 3, never)
    expected = cv2.resize(image, (128, 128), interpolation=cv2.INTER_AREA)
    assert np.array_equal(out[90:218, 100:228], expected)
    assert np.array_equal(out, outpaint(image, (300, 300), (128, 128), (100, 90), 3, never))
    assert not np.array_equal(out, outpaint(image, (300, 300), (128, 128), (100, 90), 4, never))


def test_outpaint_enlarged_zoom_renders_only_the_visible_part():
    image = landscape(64)
    out = outpaint(image, (200, 200), (6000, 6000), (-2900, -2900), 0, never)
    assert out.shape == (200, 200, 3)
    centre = image[31:33, 31:33].astype(float).mean((0, 1))
    assert np.abs(out.astype(float).mean((0, 1)) - centre).max() < 25


@pytest.mark.parametrize(
    "canvas, size, at",
    [
        ((512, 512), (256, 256), (512, 0)),  # starts right of the canvas
        ((512, 512), (256, 256), (-256, 0)),  # ends left of it
        ((9000, 512), (256, 256), (0, 0)),  # canvas over 8192
        ((512, 512), (0, 256), (0, 0)),  # empty original
        ((512, 512), (256.5, 256), (0, 0)),  # fractional size
        ((512,), (256, 256), (0, 0)),  # not a pair
    ],
)
def test_outpaint_refuses_bad_geometry(canvas, size, at):
    refused(lambda: outpaint(landscape(32), canvas, size, at, 0, never), 400, "invalid_outpaint")


# --- fill / cleanUp -----------------------------------------------------------------------------


def disc_mask(size: int, centre: tuple[int, int], radius: int) -> np.ndarray:
    mask = np.zeros((size, size), np.uint8)
    cv2.circle(mask, centre, radius, 1, -1)
    return mask.astype(bool)


def test_fill_changes_only_masked_pixels_and_blends_the_content():
    image = landscape(256)
    mask = disc_mask(256, (150, 180), 50)
    content = textured((256, 256, 3), (200, 60, 60), 9)  # a red flower bed, as generated
    out = fill(image, mask, content, never)
    assert np.array_equal(out[~mask], image[~mask])
    core = disc_mask(256, (150, 180), 25)
    # Inside: the content's pattern, shifted towards the surrounding colours at the edge.
    correlation = np.corrcoef(out[core][:, 0].astype(float), content[core][:, 0].astype(float))[0, 1]
    assert correlation > 0.9
    ring_in = disc_mask(256, (150, 180), 50) & ~disc_mask(256, (150, 180), 47)
    ring_out = disc_mask(256, (150, 180), 54) & ~mask
    assert np.abs(out[ring_in].mean(0) - out[ring_out].mean(0)).max() < 15


def test_fill_resizes_content_and_checks_its_mask():
    image = landscape(128)
    mask = disc_mask(128, (64, 64), 20)
    out = fill(image, mask, textured((64, 64, 3), (200, 200, 40), 1), never)
    assert out.shape == image.shape and np.array_equal(out[~mask], image[~mask])
    refused(lambda: fill(image, mask[:100], image, never), 400, "invalid_mask")
    refused(lambda: fill(image, np.zeros_like(mask), image, never), 400, "empty_mask")


@pytest.mark.parametrize("box", [(40, 175, 100, 240), (150, 20, 230, 90)], ids=["on-grass", "in-sky"])
def test_clean_up_removes_an_object_and_matches_the_background(box):
    background = landscape(256, seed=3)
    image = background.copy()
    x0, y0, x1, y1 = box
    cv2.rectangle(image, (x0, y0), (x1, y1), (200, 40, 160), -1)  # a magenta box
    mask = np.zeros((256, 256), bool)
    mask[y0 - 2 : y1 + 3, x0 - 2 : x1 + 3] = True
    out = clean_up(image, mask, never)
    hole = cv2.dilate(mask.view(np.uint8), cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (2 * cleanup_radius(mask.shape) + 1,) * 2)).astype(bool)
    assert np.array_equal(out[~hole], image[~hole])
    diff = out[mask].astype(float) - background[mask]
    assert np.abs(diff).mean() < 16  # grain differs pixel by pixel (it is synthesised) ...
    assert np.abs(diff.mean(axis=0)).max() < 6  # ... but the colour matches
    # and the grain is there: not a flat smear.
    assert out[mask].astype(float).std(axis=0).mean() > 0.5 * background[mask].astype(float).std(axis=0).mean()


def test_clean_up_radius_and_mask_errors():
    assert cleanup_radius((256, 256)) == 4 and cleanup_radius((2048, 1024)) == 8
    image = landscape(64)
    refused(lambda: clean_up(image, np.ones((64, 64), bool), never), 400, "invalid_mask")
    refused(lambda: clean_up(image, np.zeros((64, 64), bool), never), 400, "empty_mask")
    refused(lambda: clean_up(image, np.ones((32, 64), bool), never), 400, "invalid_mask")


# --- removeBg -----------------------------------------------------------------------------------


def subject_scene(size: int, touching: bool) -> tuple[np.ndarray, np.ndarray]:
    """A two-tone textured subject on a textured, shaded backdrop, and the subject's true mask."""
    backdrop = textured((size, size, 3), (70, 90, 120), 1, 25).astype(int)
    backdrop += np.linspace(-30, 30, size).astype(int)[:, None, None]
    truth = np.zeros((size, size), np.uint8)
    if touching:  # a bust cut by the bottom edge
        cv2.ellipse(truth, (size // 2, size), (size // 4, size // 2), 0, 0, 360, 1, -1)
        cv2.circle(truth, (size // 2, size // 3), size // 7, 1, -1)
    else:
        cv2.ellipse(truth, (size // 2, size // 2 + 10), (size // 4, size // 3), 15, 0, 360, 1, -1)
        cv2.circle(truth, (int(size * 0.72), int(size * 0.28)), size // 8, 1, -1)
    subject = textured((size, size, 3), (220, 150, 60), 2, 30)
    subject[:, : size // 2] = (subject[:, : size // 2] * 0.7).astype(np.uint8)
    image = np.clip(backdrop, 0, 255).astype(np.uint8)
    image[truth == 1] = subject[truth == 1]
    return cv2.GaussianBlur(image, (0, 0), 0.7), truth.astype(bool)


@pytest.mark.parametrize("touching", [False, True])
def test_remove_background_finds_the_subject(touching):
    image, truth = subject_scene(384, touching)
    out = remove_background(image, never)
    assert out.shape == (384, 384, 4) and np.array_equal(out[..., :3], image)
    found = out[..., 3] >= 128
    assert (found & truth).sum() / (found | truth).sum() >= 0.9
    # Soft edges: some alpha values in between, only near the boundary.
    soft = (out[..., 3] > 20) & (out[..., 3] < 235)
    assert soft.any() and soft.mean() < 0.05
    assert np.array_equal(out, remove_background(image, never))


# --- vectorize ----------------------------------------------------------------------------------


def grey_thumbnail(image: np.ndarray) -> np.ndarray:
    return cv2.resize(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), (64, 64), interpolation=cv2.INTER_AREA)


def svg_size(svg: str) -> tuple[str, str, str]:
    root = ET.fromstring(svg)
    return root.get("width"), root.get("height"), root.get("viewBox")


def test_vectorize_renders_back_close_to_the_source():
    image = landscape(256)
    result = vectorize(image, never)
    assert svg_size(result.svg) == ("256", "256", "0 0 256 256")
    assert result.preview.shape == image.shape and result.preview.dtype == np.uint8
    assert np.abs(grey_thumbnail(result.preview).astype(int) - grey_thumbnail(image)).mean() < 6
    assert np.abs(result.preview.astype(int) - image).mean() < 12


def test_vectorize_traces_a_capped_copy_but_keeps_the_original_size(monkeypatch):
    module = importlib.import_module("imagekit.sandbox.engines.edits.vectorize")
    monkeypatch.setattr(module, "MAX_TRACE_PIXELS", 100 * 80)
    image = landscape(240)[:, 20:220]  # 240 x 200
    result = vectorize(image, never)
    assert svg_size(result.svg) == ("200", "240", "0 0 200 240")
    assert "scale(" in result.svg and result.preview.shape == (240, 200, 3)
    assert np.abs(result.preview.astype(int) - image).mean() < 16


# --- reimagine ----------------------------------------------------------------------------------


def test_reimagine_subtle_moves_less_than_strong_and_is_seeded():
    image = landscape(256)
    distance = lambda a: float(np.abs(a.astype(int) - image).mean())  # noqa: E731
    subtle, strong = reimagine(image, "subtle", 5, never), reimagine(image, "strong", 5, never)
    assert 0 < distance(subtle) < distance(strong)
    assert np.array_equal(subtle, reimagine(image, "subtle", 5, never))
    assert not np.array_equal(strong, reimagine(image, "strong", 6, never))
    related = np.corrcoef(cv2.resize(strong, (32, 32)).ravel(), cv2.resize(image, (32, 32)).ravel())[0, 1]
    assert related > 0.8
    refused(lambda: reimagine(image, "wild", 1, never), 400, "invalid_strength")


# --- cancellation -------------------------------------------------------------------------------


class Counter:
    """A check that counts its calls and cancels once it has been called ``limit`` times."""

    def __init__(self, limit: int | None = None):
        self.calls = 0
        self.limit = limit

    def __call__(self) -> None:
        self.calls += 1
        if self.limit is not None and self.calls > self.limit:
            raise Cancelled("cancelled by the test")


def _ops() -> dict[str, tuple]:
    image = landscape(256)
    mask = disc_mask(256, (128, 180), 40)
    return {
        # (call taking a check, minimum number of checks: one per tile / level / iteration / colour)
        "enhance": (lambda c: enhance(landscape(600), 2, c), 9),
        "upsize": (lambda c: upsize(image, c), 1),
        "outpaint": (lambda c: outpaint(image, (512, 512), (256, 256), (128, 128), 0, c), 20),
        "fill": (lambda c: fill(image, mask, textured((256, 256, 3), (200, 60, 60), 1), c), 8),
        "clean_up": (lambda c: clean_up(image, mask, c), 6),
        "remove_background": (lambda c: remove_background(subject_scene(256, False)[0], c), 4),
        "vectorize": (lambda c: vectorize(image, c), 16),
        "reimagine": (lambda c: reimagine(image, "strong", 0, c), 3),
    }


@pytest.mark.parametrize("op", list(_ops()))
def test_each_edit_checks_inside_its_loops_and_stops_when_cancelled(op):
    call, at_least = _ops()[op]
    counter = Counter()
    call(counter)
    assert counter.calls >= at_least
    for limit in sorted({0, counter.calls // 2, counter.calls - 1}):
        stopping = Counter(limit)
        with pytest.raises(Cancelled):
            call(stopping)
        assert stopping.calls == limit + 1  # nothing ran on after the cancelling check
