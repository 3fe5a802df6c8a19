"""Painterly looks: watercolor washes, oil brush strokes and soft pastel chalk."""

from __future__ import annotations

import cv2
import numpy as np

from ..raster import displace, edge_mask, fbm, grain, mix, resize, shrink, soft_blur, to_u8
from .context import LookContext, unit

_PAPER = np.array([250, 246, 236], np.float32)


def watercolor(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Soft bled washes on textured paper, darker where pigment pools at wash edges."""
    h, w = image.shape[:2]
    u = unit(image)
    small = cv2.medianBlur(shrink(image, max(24, max(h, w) // 5)), 5)
    wash = displace(resize(small, w, h), ctx.rng, u * 0.012, 5.0).astype(np.float32)
    ctx.check()
    blurred = soft_blur(wash, u / 90)
    pooling = np.clip(np.abs(wash - blurred).sum(axis=2) / 90.0, 0.0, 1.0)
    density = 0.72 + 0.35 * (fbm(ctx.rng, h, w, 3.0, 3) - 0.5) + 0.35 * pooling
    # Pigment is transparent: it darkens the paper in proportion to how much colour it carries.
    pigment = (255.0 - wash) * density[..., None]
    texture = 1.0 - 0.05 * fbm(ctx.rng, h, w, 60.0, 2)[..., None] - 0.015 * grain(ctx.rng, h, w)[..., None]
    paper = _PAPER * texture
    out = paper * (1.0 - pigment / 255.0)
    ctx.check()
    sketch = cv2.GaussianBlur(edge_mask(image), (3, 3), 0).astype(np.float32) / 255.0
    out = mix(out, (90, 84, 80), sketch * 0.18)
    # The wash fades out irregularly before the sheet's edge, leaving a paper margin.
    yy = np.minimum(np.arange(h), np.arange(h)[::-1])[:, None] / h
    xx = np.minimum(np.arange(w), np.arange(w)[::-1])[None, :] / w
    edge = np.minimum(yy * h, xx * w) / u + (fbm(ctx.rng, h, w, 6.0, 2) - 0.5) * 0.05
    fade = np.clip((edge - 0.015) / 0.05, 0.0, 1.0).astype(np.float32)
    return to_u8(mix(paper, out, fade))


def _kuwahara(image: np.ndarray, r: int) -> np.ndarray:
    """Edge-keeping smoothing: each pixel takes the mean of its least varied quadrant."""
    h, w = image.shape[:2]
    f = cv2.copyMakeBorder(image, r, r, r, r, cv2.BORDER_REFLECT).astype(np.float32)
    g = cv2.cvtColor(f, cv2.COLOR_RGB2GRAY)
    k = (r + 1, r + 1)
    mean = cv2.blur(f, k, anchor=(0, 0), borderType=cv2.BORDER_REFLECT)
    g_mean = cv2.blur(g, k, anchor=(0, 0), borderType=cv2.BORDER_REFLECT)
    var = cv2.blur(g * g, k, anchor=(0, 0), borderType=cv2.BORDER_REFLECT) - g_mean * g_mean
    quads = [(0, 0), (0, r), (r, 0), (r, r)]
    variances = np.stack([var[y:y + h, x:x + w] for y, x in quads])
    means = np.stack([mean[y:y + h, x:x + w] for y, x in quads])
    best = variances.argmin(axis=0)[None, ..., None]
    return np.take_along_axis(means, best, axis=0)[0]


def _stroke_kernel(length: int, angle: float) -> np.ndarray:
    """A normalised line kernel: convolving with it smears along ``angle``."""
    k = np.zeros((length, length), np.float32)
    c, d = (length - 1) / 2, (length - 1) / 2
    p0 = (round(c - d * np.cos(angle)), round(c - d * np.sin(angle)))
    p1 = (round(c + d * np.cos(angle)), round(c + d * np.sin(angle)))
    cv2.line(k, p0, p1, 1.0, 1, cv2.LINE_AA)
    return k / k.sum()


def _strokes(image: np.ndarray, rng: np.random.Generator, length: int, region: np.ndarray) -> np.ndarray:
    """Smear along two seed-chosen directions, switching between them patch by patch."""
    a = rng.uniform(0, np.pi)
    k1, k2 = _stroke_kernel(length, a), _stroke_kernel(length, a + rng.uniform(0.6, 1.4))
    return mix(cv2.filter2D(image, -1, k1), cv2.filter2D(image, -1, k2), region)


def oil_paint(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Thick brush strokes: quadrant smoothing, directional smears and lit impasto ridges."""
    h, w = image.shape[:2]
    u = unit(image)
    half = shrink(image, max(32, max(h, w) // 2))
    hu = unit(half)
    flat = _kuwahara(half, max(2, hu // 90))
    ctx.check()
    region = np.clip((fbm(ctx.rng, *half.shape[:2], 4.0, 2) - 0.5) * 6 + 0.5, 0, 1)
    length = max(3, hu // 45) | 1
    smeared = _strokes(flat, ctx.rng, length, region)
    bristles = _strokes(grain(ctx.rng, *half.shape[:2]), ctx.rng, length, region)
    ctx.check()
    paint = resize(smeared, w, h)
    relief = resize(bristles, w, h)
    # Light from the upper left catches the ridges of the bristle relief.
    bump = relief - np.roll(relief, (max(1, u // 400), max(1, u // 400)), axis=(0, 1))
    paint = paint * (1.0 + 0.22 * np.clip(bump, -1, 1)[..., None])
    hsv = cv2.cvtColor(np.clip(paint / 255.0, 0, 1).astype(np.float32), cv2.COLOR_RGB2HSV)
    hsv[..., 1] = np.clip(hsv[..., 1] * 1.25, 0, 1)
    out = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB) * 255.0
    weave = np.sin(np.arange(w, dtype=np.float32) * 2.1)[None, :] * np.sin(np.arange(h, dtype=np.float32) * 2.1)[:, None]
    return to_u8(out * (1.0 + 0.025 * weave[..., None]))


def pastel(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Chalky pastel: soft shapes, pale low-saturation colours, grainy diagonal chalk strokes."""
    h, w = image.shape[:2]
    u = unit(image)
    soft = soft_blur(image.astype(np.float32), u / 220) / 255.0
    hsv = cv2.cvtColor(soft, cv2.COLOR_RGB2HSV)
    hsv[..., 1] *= 0.42
    hsv[..., 2] = 0.74 + 0.26 * hsv[..., 2]
    out = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB) * 255.0
    ctx.check()
    # Noise smeared along one diagonal reads as the grain of chalk dragged over paper.
    chalk = cv2.filter2D(grain(ctx.rng, h, w), -1, _stroke_kernel(max(3, u // 60) | 1, ctx.rng.uniform(0.5, 1.0)))
    out = out * (1.0 - 0.06 * np.clip(chalk * 2.0, -1, 1))[..., None]
    return to_u8(mix(out, (255, 244, 246), 0.08))
