"""Background removal: grabCut at low resolution seeded from the border colours, refined at full size.

Full-resolution grabCut takes ~5 s at 1024²; at ``WORK_SIDE`` it takes tens of milliseconds. The
labels it starts from come from the border: colours seen along several sides of the frame are
background, pixels far from all of them are probable foreground (a subject touching one side stays
foreground). The low-resolution mask is cleaned of specks, upscaled, and snapped to the full-size
edges with a guided filter whose guide is the colour axis that best separates the two regions.
"""

from __future__ import annotations

import cv2
import numpy as np

from imagekit.sandbox.engines.base import CheckFn
from imagekit.sandbox.engines.edits.filters import guided_filter

WORK_SIDE = 256
ITERATIONS = 4
_CLUSTERS = 6
_SIDE_SHARE = 0.05  # a border colour must cover this share of at least two sides to be background
_SPECK = 0.01  # foreground islands and background holes smaller than this share of the image go


def _border_background(lab: np.ndarray, band: int) -> tuple[np.ndarray, np.ndarray]:
    """Centres and spreads (Lab) of the border colours that recur along at least two sides."""
    sides = [lab[:band], lab[-band:], lab[:, :band], lab[:, -band:]]
    pixels = np.concatenate([s.reshape(-1, 3) for s in sides])
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
    _, labels, centres = cv2.kmeans(pixels, _CLUSTERS, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    labels = labels.ravel()
    bounds = np.cumsum([0] + [s.shape[0] * s.shape[1] for s in sides])
    shares = np.array(
        [np.bincount(labels[a:b], minlength=_CLUSTERS) / (b - a) for a, b in zip(bounds[:-1], bounds[1:])]
    )
    keep = (shares >= _SIDE_SHARE).sum(axis=0) >= 2
    if not keep.any():  # every side differs: trust the commonest colour
        keep[np.argmax(np.bincount(labels, minlength=_CLUSTERS))] = True
    spreads = np.array(
        [np.sqrt(((pixels[labels == k] - centres[k]) ** 2).sum(axis=1).mean()) if (labels == k).any() else 0.0
         for k in range(_CLUSTERS)]
    )
    return centres[keep], spreads[keep]


def _seed_labels(small: np.ndarray) -> np.ndarray:
    """grabCut's starting labels from border colour statistics."""
    lab = cv2.cvtColor(small, cv2.COLOR_RGB2LAB).astype(np.float32)
    h, w = lab.shape[:2]
    band = max(min(h, w) // 40, 2)
    centres, spreads = _border_background(lab, band)
    # Distance to the nearest background colour, in units of that colour's own spread.
    dist = np.sqrt(((lab[:, :, None, :] - centres[None, None]) ** 2).sum(axis=3))
    score = (dist / (np.maximum(spreads, 4.0) * 2.5)).min(axis=2)
    labels = np.where(score > 1.0, cv2.GC_PR_FGD, cv2.GC_PR_BGD).astype(np.uint8)
    frame = np.zeros((h, w), bool)
    frame[:band], frame[-band:], frame[:, :band], frame[:, -band:] = True, True, True, True
    labels[frame & (score <= 1.0)] = cv2.GC_BGD
    if (labels == cv2.GC_PR_FGD).sum() < 0.005 * h * w:
        # Nothing stands out from the border: fall back to "the subject is in the middle".
        labels[:] = cv2.GC_PR_BGD
        labels[h // 8 : h - h // 8, w // 8 : w - w // 8] = cv2.GC_PR_FGD
        labels[frame] = cv2.GC_BGD
    return labels


def _despeckle(fg: np.ndarray) -> np.ndarray:
    """Drop small foreground islands, and fill small background holes that do not reach the frame."""
    h, w = fg.shape
    for value in (True, False):
        count, comp, stats, _ = cv2.connectedComponentsWithStats((fg == value).view(np.uint8), connectivity=4)
        x, y, bw, bh, area = stats.T
        touches = (x == 0) | (y == 0) | (x + bw == w) | (y + bh == h)
        flip = (area < _SPECK * fg.size) & (value | ~touches)
        flip[0] = False  # label 0 is the other region
        fg = np.where(flip[comp], not value, fg)
    return fg


def _separating_guide(image: np.ndarray, fg_small: np.ndarray, small: np.ndarray) -> np.ndarray:
    """Full-size float32 guide in [0, 1]: colour projected on the axis separating fg from bg (LDA)."""
    pixels = small.reshape(-1, 3).astype(np.float32)
    inside, outside = pixels[fg_small.ravel()], pixels[~fg_small.ravel()]
    pooled = np.cov(inside, rowvar=False) + np.cov(outside, rowvar=False) + np.eye(3) * 4.0
    axis = np.linalg.solve(pooled, inside.mean(axis=0) - outside.mean(axis=0)).astype(np.float32)
    guide = image.reshape(-1, 3).astype(np.float32) @ axis
    lo, hi = np.percentile(guide[:: max(guide.size // 50_000, 1)], [1, 99])
    return np.clip((guide - lo) / max(hi - lo, 1e-6), 0, 1).reshape(image.shape[:2])


def remove_background(image: np.ndarray, check: CheckFn, subject: np.ndarray | None = None) -> np.ndarray:
    """RGBA (H, W, 4): the image with a soft alpha that keeps the foreground; ``check`` per iteration.

    With ``subject`` (a bool (H, W) mask of where the image's subject is, known when the sandbox drew
    the image), that is the foreground, its edge softened by a pixel; else it is found by grabCut."""
    if subject is not None and subject.shape == image.shape[:2] and subject.any():
        soft = cv2.GaussianBlur(subject.astype(np.float32), (0, 0), 0.8)
        return np.dstack([image, np.rint(np.clip(soft, 0, 1) * 255).astype(np.uint8)])
    h, w = image.shape[:2]
    scale = min(1.0, WORK_SIDE / max(h, w))
    small = cv2.resize(image, (max(round(w * scale), 8), max(round(h * scale), 8)), interpolation=cv2.INTER_AREA)
    cv2.setRNGSeed(0)  # k-means and grabCut draw random numbers from this thread's generator
    labels = _seed_labels(small)
    bgr = cv2.cvtColor(small, cv2.COLOR_RGB2BGR)
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    for i in range(ITERATIONS):
        check()
        cv2.grabCut(bgr, labels, None, bgd, fgd, 1, cv2.GC_EVAL if i else cv2.GC_INIT_WITH_MASK)
    fg = _despeckle(np.isin(labels, (cv2.GC_FGD, cv2.GC_PR_FGD)))
    check()
    alpha = cv2.resize(fg.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    if fg.any() and not fg.all():
        guide = _separating_guide(image, fg, small)
        radius = max(2, round(2 / scale))
        alpha = guided_filter(guide, alpha, radius, 1e-3)
    alpha = np.rint(np.clip(alpha, 0, 1) * 255).astype(np.uint8)
    return np.dstack([image, alpha])
