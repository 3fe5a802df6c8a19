"""Mask checks and morphology shared by the mask-driven edits (fill, cleanUp) and outpainting."""

from __future__ import annotations

import cv2
import numpy as np

from imagekit.sandbox.interface.errors import SandboxError


def validate_mask(mask: np.ndarray, image: np.ndarray) -> np.ndarray:
    """Return ``mask`` as bool after checking it fits ``image`` and marks something.

    A mask of the wrong shape is 400 ``invalid_mask``; one that marks no pixel is 400 ``empty_mask``.
    """
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.shape != image.shape[:2]:
        raise SandboxError("invalid_mask", f"mask is {mask.shape}, image is {image.shape[:2]}")
    mask = mask.astype(bool, copy=False)
    if not mask.any():
        raise SandboxError("empty_mask", "the mask marks no pixel")
    return mask


def disk(radius: int) -> np.ndarray:
    """A filled disk structuring element of the given radius (diameter 2r+1)."""
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))


def dilate(mask: np.ndarray, radius: int) -> np.ndarray:
    """Grow a bool mask by a disk of ``radius`` pixels."""
    if radius <= 0:
        return mask.copy()
    return cv2.dilate(mask.view(np.uint8), disk(radius)).astype(bool)


def distance_inside(mask: np.ndarray) -> np.ndarray:
    """Float32 distance of each marked pixel to the nearest unmarked one (0 outside the mask)."""
    return cv2.distanceTransform(mask.view(np.uint8), cv2.DIST_L2, 3)
