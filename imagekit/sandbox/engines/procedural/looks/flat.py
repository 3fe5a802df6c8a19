"""Flat-colour looks: pixel art, flat vector illustration and low-poly facets."""

from __future__ import annotations

import cv2
import numpy as np

from ..quantize import nearest
from ..raster import mix, resize, saturate, shrink, to_u8
from .context import LookContext, unit

_BAYER4 = np.array([[0, 8, 2, 10], [12, 4, 14, 6], [3, 11, 1, 9], [15, 7, 13, 5]], np.float32) / 16.0 - 0.47


def kmeans(pixels: np.ndarray, k: int, rng: np.random.Generator, rounds: int = 8) -> np.ndarray:
    """Deterministic k-means colour clustering of (n, 3) pixels; returns (k', 3) float32 centres."""
    data = pixels.reshape(-1, 3).astype(np.float32)
    if len(data) > 6000:  # a random sample finds the same dominant colours much faster
        data = data[rng.choice(len(data), 6000, replace=False)]
    # Farthest-point seeding: spread the starting centres over the colours actually present.
    centres = [data[int(rng.integers(len(data)))]]
    dist = ((data - centres[0]) ** 2).sum(axis=1)
    for _ in range(1, min(k, len(data))):
        centres.append(data[int(dist.argmax())])
        dist = np.minimum(dist, ((data - centres[-1]) ** 2).sum(axis=1))
    c = np.array(centres, np.float32)
    for _ in range(rounds):
        labels = nearest(data[:, None, :], c).ravel()
        counts = np.bincount(labels, minlength=len(c)).astype(np.float32)
        sums = np.stack([np.bincount(labels, data[:, i], minlength=len(c)) for i in range(3)], axis=1)
        filled = counts > 0
        c[filled] = sums[filled] / counts[filled, None]
    return c


def pixel_art(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Big square pixels in a small palette with ordered dithering, scaled up without smoothing."""
    h, w = image.shape[:2]
    block = max(2, round(unit(image) / 72))
    sw, sh = -(-w // block), -(-h // block)
    small = saturate(resize(image, sw, sh), 1.2)
    colours = kmeans(small, 14, ctx.rng)
    ctx.check()
    dither = np.tile(_BAYER4, (-(-sh // 4), -(-sw // 4)))[:sh, :sw, None] * 28.0
    quantised = colours[nearest(small.astype(np.float32) + dither, colours)]
    big = cv2.resize(to_u8(quantised), (sw * block, sh * block), interpolation=cv2.INTER_NEAREST)
    return np.ascontiguousarray(big[:h, :w])


def flat_vector(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Smooth-edged regions of a few flat colours, each outlined with a dark stroke."""
    h, w = image.shape[:2]
    u = unit(image)
    small = cv2.medianBlur(cv2.medianBlur(shrink(image, 384), 5), 5)
    colours = kmeans(small, 9, ctx.rng)
    ctx.check()
    smooth = cv2.GaussianBlur(resize(small, w, h), (0, 0), max(1.0, u / 300))
    labels = nearest(smooth, colours).astype(np.uint8)
    flat = saturate(to_u8(colours[labels]), 1.3)
    ctx.check()
    border = cv2.morphologyEx(labels, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
    width = max(1, u // 320)
    if width > 1:
        border = cv2.dilate(border.astype(np.uint8), np.ones((width, width), np.uint8)) > 0
    ink = colours[colours.sum(axis=1).argmin()] * 0.35
    return to_u8(mix(flat, ink, border.astype(np.float32)))


def _triangles(ctx: LookContext, h: int, w: int) -> np.ndarray:
    """Triangles of a jittered grid over (h, w): float32 (rows, cols, 2, 3, 2), two per cell,
    split along a random diagonal."""
    cell = max(h, w) / 22
    cols, rows = max(1, round(w / cell)), max(1, round(h / cell))
    gx = np.linspace(0, w - 1, cols + 1, dtype=np.float32)[None, :].repeat(rows + 1, 0)
    gy = np.linspace(0, h - 1, rows + 1, dtype=np.float32)[:, None].repeat(cols + 1, 1)
    jitter = ctx.rng.uniform(-0.38, 0.38, (2, rows + 1, cols + 1)).astype(np.float32)
    # Points on the frame stay on the frame so the triangles tile the whole canvas.
    gx[:, 1:-1] += jitter[0, :, 1:-1] * (w / cols)
    gy[1:-1, :] += jitter[1, 1:-1, :] * (h / rows)
    p = np.stack([gx, gy], axis=-1)
    a, b, c, d = p[:-1, :-1], p[:-1, 1:], p[1:, 1:], p[1:, :-1]
    flip = (ctx.rng.random((rows, cols)) < 0.5)[..., None, None]
    first = np.where(flip, np.stack([a, b, c], axis=2), np.stack([a, b, d], axis=2))
    second = np.where(flip, np.stack([a, c, d], axis=2), np.stack([b, c, d], axis=2))
    return np.stack([first, second], axis=2)


def low_poly(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Jittered-grid triangles, each filled flat with the colour under its centre, lit by facet."""
    h, w = image.shape[:2]
    tris = _triangles(ctx, h, w)
    centres = tris.mean(axis=3).astype(np.intp)
    blurred = cv2.GaussianBlur(image, (0, 0), max(1.0, max(h, w) / 88))
    light = ctx.rng.normal(1.0, 0.07, tris.shape[:3] + (1,))
    colours = np.clip(blurred[centres[..., 1], centres[..., 0]] * light, 0, 255).astype(np.uint8).tolist()
    corners = tris.round().astype(np.int32)
    out = np.empty_like(image)
    for i in range(corners.shape[0]):
        ctx.check()
        for j in range(corners.shape[1]):
            for t in range(2):
                cv2.fillConvexPoly(out, corners[i, j, t], colours[i][j][t])
    return out
