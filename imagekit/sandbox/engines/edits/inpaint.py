"""Mask-driven edits: generative fill (blend given content into the mask) and cleanUp (remove by inpainting).

Both guarantee exactly which pixels may change: ``fill`` touches only pixels inside the mask;
``clean_up`` touches only pixels inside the mask grown by :func:`cleanup_radius`.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from imagekit.sandbox.engines.base import CheckFn
from imagekit.sandbox.engines.edits.filters import masked_blur, pull_push
from imagekit.sandbox.engines.edits.masks import dilate, distance_inside, validate_mask
from imagekit.sandbox.engines.edits.synthesis import synthesize
from imagekit.sandbox.interface.errors import SandboxError

_FEATHER = 6.0  # px inside the mask over which generated content fades in
# The colour correction reaches this share of the mask's inner radius into it, at most _MEMBRANE_MAX px.
_MEMBRANE_SHARE = 0.35
_MEMBRANE_MAX = 48.0
_CLEANUP_SEED = 0  # cleanUp takes no seed; a fixed one keeps it deterministic


def cleanup_radius(shape: tuple[int, ...]) -> int:
    """Dilation radius (px) applied to a cleanUp mask: ``max(4, ceil(max(H, W) / 256))``.

    Painted masks hug objects loosely and antialiased edges leave halos; growing the mask by a disk
    of this radius removes them. Pixels outside the grown mask are returned bitwise unchanged.
    """
    return max(4, math.ceil(max(shape[:2]) / 256))


def fill(image: np.ndarray, mask: np.ndarray, content: np.ndarray, check: CheckFn) -> np.ndarray:
    """Blend ``content`` (an RGB image generated for the prompt) into the masked region.

    Poisson-like at the edge, itself inside: the colour offset between image and content along the
    mask's edge is spread smoothly into the mask (a membrane) and faded out with depth, so the
    content meets its surroundings without a seam yet keeps its own colours further in (a full
    Poisson clone would turn red flowers green on a lawn); a short feather hides the change of
    grain. Pixels outside the mask are bitwise unchanged. A mask not matching the image is 400
    ``invalid_mask``; an empty one 400 ``empty_mask``. Content of another size is resized.
    """
    mask = validate_mask(mask, image)
    h, w = mask.shape
    if content.shape[:2] != (h, w):
        content = cv2.resize(content, (w, h), interpolation=cv2.INTER_AREA)
    check()
    # Offsets sampled on a ring just outside the mask, pre-smoothed so pixel noise does not spread.
    ring = dilate(mask, 3) & ~mask
    offset = masked_blur(image.astype(np.float32) - content.astype(np.float32), ring, 2.0)
    membrane = pull_push(offset, ring, check)
    check()
    depth = distance_inside(mask)
    reach = float(np.clip(_MEMBRANE_SHARE * depth.max(), _FEATHER, _MEMBRANE_MAX))
    fade = np.clip(1.0 - depth / reach, 0.0, 1.0)
    corrected = content.astype(np.float32) + membrane * (fade * fade * (3 - 2 * fade))[..., None]
    alpha = np.clip(depth / _FEATHER, 0.0, 1.0)[..., None]
    blended = alpha * corrected + (1.0 - alpha) * image.astype(np.float32)
    out = image.copy()
    out[mask] = np.rint(np.clip(blended[mask], 0, 255)).astype(np.uint8)
    return out


def clean_up(image: np.ndarray, mask: np.ndarray, check: CheckFn) -> np.ndarray:
    """Remove the masked object: the mask grown by :func:`cleanup_radius` is re-synthesised from its
    surroundings (coarse-to-fine inpainting plus matched grain). Outside the grown mask the pixels are
    bitwise unchanged. Mask errors as in :func:`fill`; a mask covering everything is 400 ``invalid_mask``.
    """
    mask = validate_mask(mask, image)
    hole = dilate(mask, cleanup_radius(mask.shape))
    if hole.all():
        raise SandboxError("invalid_mask", "the mask covers the whole image; nothing is left to continue from")
    return synthesize(image, ~hole, _CLEANUP_SEED, check)
