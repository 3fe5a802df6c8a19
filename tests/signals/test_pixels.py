"""The signals as pure functions on planted pictures: copies found, blur and noise seen, leaks measured."""

from __future__ import annotations

import io
import itertools

import cv2
import numpy as np
import pytest
from PIL import Image

from imagekit.signals import pixels
from tests.signals.scenes import cropped, jpeg, noisy, scene


def _signature(picture) -> tuple[int, bytes]:
    colour = pixels.rgb(picture)
    return pixels.phash(pixels.grey(colour)), pixels.colours(colour)


def _near(a: tuple[int, bytes], b: tuple[int, bytes]) -> bool:
    return (pixels.hamming(a[0], b[0]) <= pixels.DUPLICATE_BITS
            and pixels.colour_distance(a[1], b[1]) <= pixels.DUPLICATE_COLOURS)


@pytest.mark.parametrize("copy", ["half size, JPEG 60", "JPEG 40", "2 % cropped a side", "PNG at 1.5x"])
def test_resized_recompressed_and_cropped_copies_are_near_duplicates(copy):
    for seed in range(10):
        picture = scene(seed)
        made = {"half size, JPEG 60": lambda p: Image.open(io.BytesIO(jpeg(p, 60, 0.5))),
                "JPEG 40": lambda p: Image.open(io.BytesIO(jpeg(p, 40))),
                "2 % cropped a side": lambda p: cropped(p, 0.02),
                "PNG at 1.5x": lambda p: cv2.resize(p, (768, 768), interpolation=cv2.INTER_CUBIC)}[copy](picture)
        assert _near(_signature(picture), _signature(made)), (copy, seed)


def test_different_pictures_are_not_near_duplicates():
    signatures = [_signature(scene(seed)) for seed in range(100, 124)]
    pairs = list(itertools.combinations(signatures, 2))
    assert len(pairs) >= 200
    assert sum(_near(a, b) for a, b in pairs) == 0


def test_a_blurred_copy_is_less_sharp_at_any_size():
    for seed in range(10):
        picture = pixels.grey(scene(seed))
        blurred = cv2.GaussianBlur(picture, (0, 0), 2.0)
        assert pixels.sharpness(blurred) < 0.5 * pixels.sharpness(picture)
        # the same picture at twice the size scores about the same: sharpness is measured at one size
        larger = cv2.resize(picture, (1024, 1024), interpolation=cv2.INTER_AREA)
        assert pixels.sharpness(larger) == pytest.approx(pixels.sharpness(picture), rel=0.25)


@pytest.mark.parametrize("sigma", [3.0, 8.0, 20.0])
def test_planted_gaussian_noise_is_estimated_within_30_percent(sigma):
    for seed in range(5):
        picture = noisy(scene(seed), sigma, seed)
        assert pixels.noise(picture) == pytest.approx(sigma, rel=0.3), (sigma, seed)
        assert pixels.noise(pixels.grey(noisy(pixels.grey(scene(seed)), sigma, seed))) == pytest.approx(sigma, rel=0.3)
    assert pixels.noise(scene(0)) < 1.5  # a clean picture reads as almost noiseless


def test_entropy_of_flat_and_busy_pictures():
    assert pixels.entropy(np.full((64, 64), 128, np.uint8)) == 0.0
    assert 4 < pixels.entropy(pixels.grey(scene(1))) <= 8


def _masked(size: int = 256) -> tuple[np.ndarray, np.ndarray]:
    picture = scene(7, size)
    mask = np.zeros((size, size), np.uint8)
    mask[size // 4: size // 2, size // 4: size // 2] = 255
    return picture, mask


def test_an_edit_inside_its_mask_leaks_nothing():
    before, mask = _masked()
    after = before.copy()
    after[mask > 0] = 255 - after[mask > 0]
    assert pixels.leak(before, after, mask) == 0.0
    # a result twice the size, recompressed, is reconciled to the original's size first
    for scale, quality in ((2.0, 90), (1.0, 60)):
        larger = Image.open(io.BytesIO(jpeg(after, quality, scale)))
        assert pixels.leak(before, larger, mask) < 0.001


def test_an_edit_outside_its_mask_leaks_its_share():
    before, mask = _masked()
    after = before.copy()
    after[200:, :] = 255 - after[200:, :]  # the bottom strip, far from the mask: 56 of 256 rows
    outside = (mask == 0).sum()
    assert pixels.leak(before, after, mask) == pytest.approx((56 * 256) / outside, rel=0.05)
    repainted = cv2.GaussianBlur(before, (0, 0), 3)  # a service that repaints the whole image
    assert pixels.leak(before, repainted, mask) > 0.1
    shifted = np.clip(before.astype(int) + 15, 0, 255).astype(np.uint8)  # or brightens it
    assert pixels.leak(before, shifted, mask) > 0.5


def test_transparent_pixels_read_as_over_white_and_bad_arrays_are_refused():
    rgba = np.zeros((8, 8, 4), np.uint8)
    assert (pixels.grey(rgba) == 255).all()
    with pytest.raises(ValueError, match="grey, RGB or RGBA"):
        pixels.grey(np.zeros((8, 8, 2), np.uint8))


def test_a_mask_is_read_as_the_interface_reads_one():
    before, mask = _masked()
    after = before.copy()
    after[mask > 0] = 255 - after[mask > 0]
    strokes = np.zeros((*mask.shape, 4), np.uint8)  # a painter's strokes of one colour on transparency
    strokes[..., :3], strokes[..., 3] = (255, 0, 0), mask
    assert pixels.leak(before, after, strokes) == 0.0
    assert pixels.leak(before, after, Image.fromarray(strokes)) == 0.0
    assert pixels.leak(before, after, mask > 0) == 0.0


def test_files_decode_alike_whatever_their_depth_and_channels():
    picture = scene(3, 64)
    as_png = io.BytesIO()
    Image.fromarray(picture).save(as_png, "PNG")
    assert (pixels.decode(as_png.getvalue()) == picture).all()
    deep = cv2.imencode(".png", pixels.grey(picture).astype(np.uint16) * 257)[1].tobytes()  # 16 bits a sample
    assert (pixels.decode(deep) == pixels.grey(picture)).all()
    with_alpha = io.BytesIO()
    Image.fromarray(np.dstack([picture, np.full(picture.shape[:2], 255, np.uint8)])).save(with_alpha, "PNG")
    assert (pixels.rgb(pixels.decode(with_alpha.getvalue())) == picture).all()
    assert pixels.decode(b"not an image") is None
