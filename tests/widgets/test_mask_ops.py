"""The painter's mask operations without a widget: reading any mode, thresholds, sizes."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from imagekit.widgets.mask_ops import box, grow, polygon, shrink, smooth, to_bits

SIZE = (6, 4)
PAINTED = np.zeros((4, 6), bool)
PAINTED[1:3, 2:5] = True


def scaled(high, low=0, dtype=np.uint8) -> np.ndarray:
    return np.where(PAINTED, high, low).astype(dtype)


@pytest.mark.parametrize("value", [
    PAINTED,
    scaled(255), scaled(200, 100), scaled(1.0, 0.2, np.float32), scaled(65535, 30000, np.uint16),
    Image.fromarray(PAINTED), Image.fromarray(scaled(255)), Image.fromarray(scaled(255)).convert("RGB"),
    Image.fromarray(scaled(255)).convert("P"), Image.fromarray(scaled(255)).convert("I"),
    Image.fromarray(scaled(255).astype(np.float32) / 255, "F"),
    Image.fromarray(np.dstack([scaled(0)] * 3 + [scaled(255)]), "RGBA"),  # black paint, opaque
    Image.fromarray(np.dstack([np.full((4, 6), 255, np.uint8), scaled(255)]), "LA"),
    np.dstack([scaled(255)] * 3), np.dstack([scaled(9)] * 3 + [scaled(255)]), scaled(255)[..., None],
], ids=lambda v: getattr(v, "mode", None) or f"{v.dtype}{v.shape}")
def test_any_mode_is_thresholded_at_half_its_range(value):
    assert np.array_equal(to_bits(value, SIZE), PAINTED)


def test_none_is_empty_and_another_size_names_both():
    assert not to_bits(None, SIZE).any() and to_bits(None, SIZE).shape == (4, 6)
    with pytest.raises(ValueError, match="the mask is 4x6 but the image is 6x4"):
        to_bits(PAINTED.T, SIZE)
    with pytest.raises(ValueError, match="channels"):
        to_bits(np.zeros((4, 6, 5)), SIZE)


def square(side: int = 40, at: int = 30, size: int = 100) -> np.ndarray:
    bits = np.zeros((size, size), bool)
    bits[at:at + side, at:at + side] = True
    return bits


def extent(bits: np.ndarray) -> tuple[int, int]:
    """The painted width along the middle row and height along the middle column."""
    middle = bits.shape[0] // 2
    return int(bits[middle].sum()), int(bits[:, middle].sum())


@pytest.mark.parametrize("px", [1, 3, 10])
def test_grow_and_shrink_a_square_by_exactly_px(px):
    assert extent(grow(square(), px)) == (40 + 2 * px, 40 + 2 * px)
    assert extent(shrink(square(), px)) == (40 - 2 * px, 40 - 2 * px)
    assert np.array_equal(shrink(grow(square(), px), px), square())  # a square's closing is itself


def test_grow_is_a_disc_of_pixel_centres():
    dot = np.zeros((21, 21), bool)
    dot[10, 10] = True
    y, x = np.mgrid[:21, :21]
    assert np.array_equal(grow(dot, 7), (x - 10) ** 2 + (y - 10) ** 2 <= 49)
    assert np.array_equal(grow(dot, 0), dot) and grow(dot, 0) is not dot


def test_shrink_keeps_paint_on_the_image_edge():
    edge = np.zeros((50, 50), bool)
    edge[:, :20] = True
    expected = np.zeros((50, 50), bool)
    expected[:, :15] = True
    assert np.array_equal(shrink(edge, 5), expected)


def test_smooth_removes_specks_and_closes_gaps_but_keeps_the_shape():
    bits = square()
    bits[5, 5] = bits[90:92, 90:92] = True  # specks
    bits[48:51, 48:51] = False  # a hole
    smoothed = smooth(bits, 3)
    assert not smoothed[:20, :20].any() and not smoothed[85:, 85:].any()
    assert smoothed[48:51, 48:51].all() and extent(smoothed) == (40, 40)
    assert np.array_equal(smoothed[35:65], square()[35:65])  # away from its corners the square stays
    with pytest.raises(ValueError, match="whole number"):
        grow(bits, -1)


def test_a_box_is_its_pixels_right_and_bottom_exclusive():
    expected = np.zeros((8, 10), bool)
    expected[1:4, 2:5] = True
    assert np.array_equal(box((10, 8), (2, 1, 5, 4)), expected)
    assert not box((10, 8), (3, 3, 3, 6)).any()  # no area, no pixels


def test_a_polygon_holds_the_pixels_whose_centres_are_inside():
    triangle = polygon((100, 100), [(10, 10), (90, 10), (10, 90)])
    y, x = np.mgrid[:100, :100] + 0.5
    assert np.array_equal(triangle, (x > 10) & (y > 10) & (x + y < 100))
    bow = polygon((20, 20), [(0, 0), (20, 20), (20, 0), (0, 20)])  # crossed: even-odd, two triangles
    assert bow[10, 2] and bow[10, 17] and not bow[2, 10] and not bow[17, 10]
    assert np.array_equal(polygon((30, 30), [(-10, -10), (40, -10), (40, 40), (-10, 40)]), np.ones((30, 30), bool))
    with pytest.raises(ValueError, match="at least 3 points"):
        polygon((10, 10), [(0, 0), (5, 5)])
