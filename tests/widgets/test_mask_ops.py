"""The painter's mask operations without a widget: reading any mode, thresholds, sizes."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from imagekit.widgets.mask_ops import to_bits

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
