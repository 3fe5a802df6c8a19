"""Seeded texture for synthesised regions: fine detail copied in blocks from nearby known pixels.

A smooth fill (see ``synthesis``) has the right colours but no grain; pasting the high-pass detail
of nearby known blocks, overlapped with a variance-preserving window, gives the hole the grain of
its surroundings without repeating one patch.
"""

from __future__ import annotations

import cv2
import numpy as np

from imagekit.sandbox.engines.base import CheckFn
from imagekit.sandbox.engines.edits.filters import masked_blur

_DETAIL_SIGMA = 2.0  # detail finer than this is grain; coarser structure comes from the smooth fill
_NEAREST = 12  # each block picks at random among this many nearest known source blocks


def block_size(shape: tuple[int, ...]) -> int:
    """Block side for an image: 32 px up to ~1.5k px a side, doubling to at most 128."""
    side = max(shape[:2])
    return int(min(128, max(32, 2 ** round(np.log2(max(side, 1) / 32)))))


def _window(block: int) -> np.ndarray:
    """Periodic Hann window: copies overlapped at half a block blend without visible edges."""
    w = 0.5 - 0.5 * np.cos(2 * np.pi * (np.arange(block) + 0.5) / block)
    return np.outer(w, w).astype(np.float32)


def _fits(mask: np.ndarray, block: int, step: int) -> np.ndarray:
    """Top-left corners (y, x) on a ``step`` grid where a block lies wholly inside ``mask``."""
    h, w = mask.shape
    if h < block or w < block:
        return np.empty((0, 2), np.int64)
    outside = cv2.integral((~mask).view(np.uint8))
    ys, xs = np.mgrid[0 : h - block + 1 : step, 0 : w - block + 1 : step]
    bad = outside[ys + block, xs + block] - outside[ys, xs + block] - outside[ys + block, xs] + outside[ys, xs]
    return np.stack([ys[bad == 0], xs[bad == 0]], axis=1)


def synthesize_detail(image: np.ndarray, known: np.ndarray, seed: int, check: CheckFn) -> np.ndarray:
    """Zero-mean float32 detail (H, W, 3) covering every unknown pixel; ``check`` runs per block row."""
    h, w = known.shape
    block = block_size(known.shape)
    step = block // 2
    detail = image.astype(np.float32) - masked_blur(image, known, _DETAIL_SIGMA)
    # Source blocks keep clear of unknown pixels by the blur's reach, so no hole content leaks in.
    source_ok = cv2.erode(known.view(np.uint8), np.ones((7, 7), np.uint8)).astype(bool)
    sources = _fits(source_ok, block, max(step // 2, 4))
    out = np.zeros((h, w, 3), np.float32)
    if len(sources) == 0:
        return out
    rows, cols = np.nonzero(~known)
    y0, y1 = rows.min() - block + 1, rows.max() + 1
    x0, x1 = cols.min() - block + 1, cols.max() + 1
    pad = block
    acc = np.zeros((h + 2 * pad, w + 2 * pad, 3), np.float32)
    weight = np.zeros((h + 2 * pad, w + 2 * pad), np.float32)
    win = _window(block)
    win3 = win[..., None]
    unknown_sum = cv2.integral((~known).view(np.uint8))
    src_centres = sources.astype(np.float32) + block / 2
    rng = np.random.default_rng(seed)
    for ty in range(y0, y1, step):
        check()
        txs = np.arange(x0, x1, step)
        cy0, cy1 = np.clip([ty, ty + block], 0, h)
        cx0, cx1 = np.clip(txs, 0, w), np.clip(txs + block, 0, w)
        hit = unknown_sum[cy1, cx1] - unknown_sum[cy0, cx1] - unknown_sum[cy1, cx0] + unknown_sum[cy0, cx0]
        txs = txs[hit > 0]
        if len(txs) == 0:
            continue
        centres = np.stack([np.full(len(txs), ty + block / 2), txs + block / 2], axis=1).astype(np.float32)
        dist = ((centres[:, None, :] - src_centres[None, :, :]) ** 2).sum(axis=2)
        k = min(_NEAREST, len(sources))
        nearest = np.argpartition(dist, k - 1, axis=1)[:, :k]
        picks = sources[nearest[np.arange(len(txs)), rng.integers(0, k, len(txs))]]
        for tx, (sy, sx) in zip(txs, picks):
            ay, ax = ty + pad, tx + pad
            acc[ay : ay + block, ax : ax + block] += detail[sy : sy + block, sx : sx + block] * win3
            weight[ay : ay + block, ax : ax + block] += win * win
    # Dividing by the root of the summed squared weights keeps the grain's variance constant
    # where independent blocks overlap (a plain average would halve it between block centres).
    acc = acc[pad : pad + h, pad : pad + w]
    weight = weight[pad : pad + h, pad : pad + w]
    np.divide(acc, np.sqrt(weight)[..., None], out=out, where=weight[..., None] > 1e-6)
    return out
