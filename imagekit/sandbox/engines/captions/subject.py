"""Main-subject detection: pixels that differ from the border's colours, largest blob wins.

Generated and product images mostly put the subject away from the frame edge on a background
that reaches the border, so distance from the border colours is a cheap, deterministic saliency
map that needs no model. Each side contributes its own median colour, so a sky-over-ground
background (top and bottom differ) still reads as background.
"""

from __future__ import annotations

import cv2
import numpy as np

from .palette import nearest

BoxT = tuple[int, int, int, int]

_BORDER_FRACTION = 0.03
_MIN_DELTA_E = 15.0
"""Below this Lab distance a pixel is background even when Otsu would split finer (noise, grain)."""
_MIN_OUTLINE_SLOPE = 2.0
"""Mean colour change (ΔE per working pixel) along a subject's outline; smooth gradients stay far below."""
_OUTLINE_OVER_TEXTURE = 1.5
_MIN_AREA = 0.003
_MIN_SIDE = 8


def background_distance(lab: np.ndarray) -> np.ndarray:
    """Per-pixel Lab distance (H, W) to the nearest of the four side-median border colours."""
    h, w = lab.shape[:2]
    band = max(1, round(_BORDER_FRACTION * min(h, w)))
    sides = (lab[:band], lab[-band:], lab[:, :band], lab[:, -band:])
    protos = np.array([np.median(side.reshape(-1, 3), axis=0) for side in sides], dtype=np.float32)
    return nearest(lab.reshape(-1, 3), protos, distance=True).reshape(h, w)


def foreground_mask(lab: np.ndarray) -> np.ndarray:
    """Boolean mask of pixels that stand out from the border colours."""
    dist = background_distance(lab)
    scaled = np.clip(dist * 2.0, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    return dist > max(_MIN_DELTA_E, otsu / 2.0)


def find_subject(lab: np.ndarray, slope: np.ndarray) -> tuple[np.ndarray, BoxT] | None:
    """The main subject of a (blurred) Lab image whose per-pixel colour slope (ΔE/px) is ``slope``."""
    found = largest_component(foreground_mask(lab))
    if found is None:
        return None
    blob, (x, y, w, h) = found
    # A blob running edge to edge is a band of background (sky between hills), not an object.
    if (x == 0 and x + w == blob.shape[1]) or (y == 0 and y + h == blob.shape[0]):
        return None
    # An object has an outline; a gradient or vignette drifting away from the border colours does not.
    kernel = np.ones((3, 3), np.uint8)
    ring = cv2.dilate(blob.astype(np.uint8), kernel) > cv2.erode(blob.astype(np.uint8), kernel)
    ring[[0, -1], :] = ring[:, [0, -1]] = False  # where the blob meets the frame there is no outline
    # It must also stand out from the image's typical texture, or noise grains become "subjects".
    needed = max(_MIN_OUTLINE_SLOPE, _OUTLINE_OVER_TEXTURE * float(np.median(slope)))
    return found if ring.any() and float(slope[ring].mean()) >= needed else None


def largest_component(mask: np.ndarray) -> tuple[np.ndarray, BoxT] | None:
    """The largest 8-connected blob of ``mask`` after removing specks, as (blob mask, x, y, w, h box).

    None when the image is too small to have a subject or the blob is a speck.
    """
    h, w = mask.shape
    if min(h, w) < _MIN_SIDE:
        return None
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    cleaned = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, kernel)
    cleaned = cv2.morphologyEx(cleaned, cv2.MORPH_CLOSE, kernel)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(cleaned, connectivity=8)
    if count < 2:
        return None
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    if stats[best, cv2.CC_STAT_AREA] < _MIN_AREA * h * w:
        return None
    x, y, bw, bh = (int(v) for v in stats[best, :4])
    return labels == best, (x, y, bw, bh)


def scale_box(box: BoxT, sx: float, sy: float, width: int, height: int) -> BoxT:
    """Map a working-size box to original pixels, rounding outwards and clamping to the frame."""
    x, y, w, h = box
    x0, y0 = int(np.floor(x * sx)), int(np.floor(y * sy))
    x1, y1 = min(width, int(np.ceil((x + w) * sx))), min(height, int(np.ceil((y + h) * sy)))
    return x0, y0, x1 - x0, y1 - y0
