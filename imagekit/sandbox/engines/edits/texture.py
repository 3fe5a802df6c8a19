"""Seeded grain for synthesised regions: fine detail copied in blocks from matching known pixels.

A smooth fill (see ``synthesis``) has the right colours but no grain. Each block of the filled area
takes the high-pass detail of a known block picked at random among the few that best match its
colour, grain strength and position, and blocks overlap by half with a variance-preserving window.
So sky gets sky grain, grass gets grass grain, and edges are not scattered into flat areas.

Memory stays near the canvas itself even for an 8192² outpaint: detail is computed only around the
known pixels, block statistics on a copy an eighth of a block per pixel, and the accumulated grain
is finished and written row band by row band.
"""

from __future__ import annotations

import cv2
import numpy as np

from imagekit.sandbox.engines.base import CheckFn
from imagekit.sandbox.engines.edits.filters import masked_blur, pull_push

_DETAIL_SIGMA = 4.0  # detail finer than this is grain; coarser structure comes from the smooth fill
_CANDIDATES = 8  # each block picks at random among this many best-matching source blocks
# Mismatches that cost the same when ranking source blocks: mean colour (grey levels), grain
# strength (log energy), structure (grey levels of smooth-colour spread) and distance (in blocks).
_COLOUR_TOLERANCE = 12.0
_ENERGY_TOLERANCE = 0.5
_STRUCTURE_TOLERANCE = 4.0
_REACH_BLOCKS = 6.0


def block_size(shape: tuple[int, ...]) -> int:
    """Block side for an image: 32 px up to ~1.5k px a side, doubling to at most 128."""
    side = max(shape[:2])
    return int(min(128, max(32, 2 ** round(np.log2(max(side, 1) / 32)))))


def _hann(block: int) -> np.ndarray:
    """Periodic Hann window: copies overlapped at half a block sum to one, without visible edges."""
    return (0.5 - 0.5 * np.cos(2 * np.pi * (np.arange(block) + 0.5) / block)).astype(np.float32)


def _box_sums(integral: np.ndarray, y0, y1, x0, x1) -> np.ndarray:
    return integral[y1, x1] - integral[y0, x1] - integral[y1, x0] + integral[y0, x0]


def _fits(mask: np.ndarray, block: int, step: int) -> np.ndarray:
    """Top-left corners (y, x) on a ``step`` grid where a block lies wholly inside ``mask``."""
    h, w = mask.shape
    if h < block or w < block:
        return np.empty((0, 2), np.int64)
    outside = cv2.integral((~mask).view(np.uint8))
    ys, xs = np.mgrid[0 : h - block + 1 : step, 0 : w - block + 1 : step]
    bad = _box_sums(outside, ys, ys + block, xs, xs + block)
    return np.stack([ys[bad == 0], xs[bad == 0]], axis=1)


def _reduce(image: np.ndarray, shrink: int) -> np.ndarray:
    """Area-averaged float32 copy ``shrink`` times smaller (rounded up); uint8 stays uint8 until then."""
    h, w = image.shape[:2]
    size = (max(1, -(-w // shrink)), max(1, -(-h // shrink)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA).astype(np.float32)


def _integral(values: np.ndarray) -> np.ndarray:
    """Summed-area table (H+1, W+1, C) in float64, for block means at any corner."""
    h, w = values.shape[:2]
    return cv2.integral(values.astype(np.float64)).reshape(h + 1, w + 1, -1)


def _features(total: np.ndarray, shrink: int, corners: np.ndarray, origin: np.ndarray, block: int) -> np.ndarray:
    """What a block must match, scaled so equal mismatches cost the same.

    ``total`` is the integral of statistics reduced ``shrink`` times (``corners`` relative to them,
    ``origin`` their offset in the canvas): colour (3), log grain energy and, for sources, squared
    colour. From them come mean colour, grain strength, structure (spread of the smooth colour: an
    edge crossing the block) and position. Targets want no structure, so blocks holding an edge are
    not copied as grain. Blocks may run off the statistics; their inside part is averaged.
    """
    h, w = total.shape[0] - 1, total.shape[1] - 1
    y0, x0 = np.clip(corners[:, 0] // shrink, 0, h), np.clip(corners[:, 1] // shrink, 0, w)
    y1, x1 = np.clip(y0 + block // shrink, 0, h), np.clip(x0 + block // shrink, 0, w)
    area = np.maximum((y1 - y0) * (x1 - x0), 1)[:, None]
    means = (_box_sums(total, y0, y1, x0, x1) / area).astype(np.float32)
    colour, energy = means[:, :3], means[:, 3:4]
    structure = np.zeros_like(energy)
    if means.shape[1] > 4:
        structure = np.sqrt(np.maximum(means[:, 4:] - colour**2, 0.0).sum(axis=1, keepdims=True))
    where = (corners + origin + block / 2).astype(np.float32) / (_REACH_BLOCKS * block)
    return np.hstack(
        [colour / _COLOUR_TOLERANCE, energy / _ENERGY_TOLERANCE, structure / _STRUCTURE_TOLERANCE, where]
    )


def _known_box(known: np.ndarray, align: int) -> tuple[int, int, int, int]:
    """Bounding box (y0, y1, x0, x1) of the known pixels, its start rounded down to ``align``."""
    rows, cols = np.flatnonzero(known.any(axis=1)), np.flatnonzero(known.any(axis=0))
    return rows[0] // align * align, rows[-1] + 1, cols[0] // align * align, cols[-1] + 1


class _Sources:
    """Known blocks to copy grain from: their detail, corners, features, and the canvas's grain map."""

    def __init__(self, canvas: np.ndarray, known: np.ndarray, block: int, check: CheckFn):
        shrink = block // 8
        y0, y1, x0, x1 = _known_box(known, shrink)
        crop, inside = canvas[y0:y1, x0:x1], known[y0:y1, x0:x1]
        smooth = masked_blur(crop, inside, _DETAIL_SIGMA)
        self.detail = crop.astype(np.float32) - smooth
        # Source blocks keep clear of unknown pixels by the blur's reach, so no hole content leaks in.
        reach = 2 * int(np.ceil(2 * _DETAIL_SIGMA)) + 1
        usable = cv2.erode(inside.view(np.uint8), np.ones((reach, reach), np.uint8)).astype(bool)
        self.corners = _fits(usable, block, block // 2)
        # Grain strength (log energy) at 1/shrink size: measured around the known pixels, then
        # interpolated over the whole canvas so targets far away have an expectation too.
        local = _reduce((self.detail * self.detail).sum(axis=2), shrink)
        local_ok = _reduce(usable.astype(np.float32), shrink) > 0.999
        where = np.s_[y0 // shrink : y0 // shrink + local.shape[0], x0 // shrink : x0 // shrink + local.shape[1]]
        self.log_energy = np.zeros((-(-known.shape[0] // shrink), -(-known.shape[1] // shrink)), np.float32)
        if len(self.corners):
            measured = np.zeros(self.log_energy.shape, bool)
            measured[where] = local_ok
            self.log_energy[where] = local
            blurred = masked_blur(self.log_energy, measured, max(block / 2 / shrink, 1.0))
            self.log_energy = pull_push(np.log1p(blurred), measured, check)
            stats = np.dstack([_reduce(smooth, shrink), self.log_energy[where], _reduce(smooth * smooth, shrink)])
            self.features = _features(_integral(stats), shrink, self.corners, np.array([y0, x0]), block)
            self.norms = (self.features**2).sum(axis=1)


def _grid(known: np.ndarray, block: int) -> tuple[range, np.ndarray]:
    """Top rows and left columns of the half-overlapping block grid over the unknown pixels.

    The grid starts a block before the first unknown pixel, so each unknown pixel lies under
    exactly two blocks per axis.
    """
    rows, cols = np.flatnonzero((~known).any(axis=1)), np.flatnonzero((~known).any(axis=0))
    step = block // 2
    return range(rows[0] - block + 1, rows[-1] + 1, step), np.arange(cols[0] - block + 1, cols[-1] + 1, step)


def add_grain(canvas: np.ndarray, known: np.ndarray, seed: int, check: CheckFn) -> None:
    """Add seeded grain, in place, to the pixels of ``canvas`` where ``known`` is False.

    ``canvas`` holds the known pixels and a smooth fill elsewhere; ``check`` runs per block row.
    """
    h, w = known.shape
    block = block_size(known.shape)
    step, shrink, pad = block // 2, block // 8, block
    sources = _Sources(canvas, known, block, check)
    if len(sources.corners) == 0:
        return
    target_totals = _integral(np.dstack([_reduce(canvas, shrink), sources.log_energy]))
    hann = _hann(block)
    win = np.outer(hann, hann)[..., None]
    # Dividing the overlapped copies by the root of their summed squared weights keeps the grain's
    # variance constant (a plain average would halve it between block centres). Every unknown pixel
    # lies under a full 2x2 set of blocks, so that sum is the grid's periodic pattern.
    period = np.sqrt(hann[:step] ** 2 + hann[step:] ** 2)
    top_rows, lefts = _grid(known, block)
    column_norm = period[(np.arange(w) - lefts[0]) % step]
    norm = (period[:, None] * column_norm[None, :])[..., None]
    unknown = cv2.integral((~known).view(np.uint8))
    x0, x1 = np.clip(lefts, 0, w), np.clip(lefts + block, 0, w)
    rng = np.random.default_rng(seed)
    k = min(_CANDIDATES, len(sources.corners))
    # Rolling accumulator for the block-tall band under the current grid row; its top half is final
    # once a row is added (later rows start lower) and is written out before moving on.
    acc = np.zeros((block, w + 2 * pad, 3), np.float32)
    for ty in top_rows:
        check()
        y0, y1 = np.clip([ty, ty + block], 0, h)
        txs = lefts[_box_sums(unknown, y0, y1, x0, x1) > 0]  # blocks touching an unknown pixel
        if len(txs):
            corners = np.stack([np.full(len(txs), ty), txs], axis=1)
            wanted = _features(target_totals, shrink, corners, np.zeros(2, np.int64), block)
            # Squared feature distance up to a per-target constant, which does not change the ranking.
            cost = sources.norms[None, :] - 2.0 * wanted @ sources.features.T
            best = np.argpartition(cost, k - 1, axis=1)[:, :k]
            picks = sources.corners[best[np.arange(len(txs)), rng.integers(0, k, len(txs))]]
            for tx, (sy, sx) in zip(txs + pad, picks):
                acc[:, tx : tx + block] += sources.detail[sy : sy + block, sx : sx + block] * win
        _finish_band(canvas, known, acc[:step, pad : pad + w] / norm, ty)
        acc[:step] = acc[step:]
        acc[step:] = 0.0


def _finish_band(canvas: np.ndarray, known: np.ndarray, grain: np.ndarray, top: int) -> None:
    """Add finished grain rows (starting at canvas row ``top``) to the canvas's unknown pixels."""
    y0, y1 = max(top, 0), min(top + len(grain), canvas.shape[0])
    if y0 >= y1:
        return
    rows = canvas[y0:y1]
    grainy = cv2.add(rows, grain[y0 - top : y1 - top], dtype=cv2.CV_8U)  # rounds and saturates
    np.copyto(rows, grainy, where=~known[y0:y1, :, None])
