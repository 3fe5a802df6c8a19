"""Painterly looks: watercolor washes, oil brush strokes and soft pastel chalk."""

from __future__ import annotations

import cv2
import numpy as np

from ..noise import displace, fbm, grain
from ..raster import edge_mask, mix, per_channel, resize, saturate, scalar, shrink, soft_blur, to_u8
from .context import LookContext, unit

_PAPER = np.array([250, 246, 236], np.float32)


def _margin(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """1 inside the sheet, falling to 0 along an irregular band at its edges: the unpainted margin."""
    u = min(h, w)
    dy = np.minimum(np.arange(h), np.arange(h)[::-1]).astype(np.float32)[:, None]
    dx = np.minimum(np.arange(w), np.arange(w)[::-1]).astype(np.float32)[None, :]
    edge = np.minimum(dy, dx) / u + (fbm(rng, h, w, 6.0, 2) - 0.5) * 0.03
    return np.clip((edge - 0.01) / 0.03, 0.0, 1.0)


def watercolor(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Soft bled washes on textured paper, darker where pigment pools at wash edges."""
    h, w = image.shape[:2]
    u = unit(image)
    small = cv2.medianBlur(shrink(image, max(32, max(h, w) // 3)), 5)
    wash = displace(saturate(resize(small, w, h), 1.35), ctx.rng, u * 0.01, 5.0).astype(np.float32)
    ctx.check()
    pooling = cv2.cvtColor(cv2.absdiff(wash, soft_blur(wash, u / 90)), cv2.COLOR_RGB2GRAY) * (1 / 30.0)
    density = 0.88 + 0.3 * (fbm(ctx.rng, h, w, 3.0, 3) - 0.5) + 0.3 * np.clip(pooling, 0.0, 1.0)
    margin = _margin(h, w, ctx.rng)
    density *= margin
    # Pigment is transparent: each channel darkens the paper by how much colour it carries.
    pigment = cv2.multiply(255.0 - wash, per_channel(density * (1 / 255.0)))
    texture = 1.0 - 0.05 * fbm(ctx.rng, h, w, 60.0, 2) - 0.015 * grain(ctx.rng, h, w)
    out = cv2.multiply(cv2.multiply(1.0 - pigment, per_channel(texture)), scalar(_PAPER))
    ctx.check()
    sketch = cv2.GaussianBlur(edge_mask(image), (3, 3), 0).astype(np.float32) * (0.18 / 255.0)
    return to_u8(mix(out, (90, 84, 80), sketch * margin))


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


def _relief(bristles: np.ndarray, w: int, h: int, light: int) -> np.ndarray:
    """Brightness factor (h, w) of a lit bristle relief: ridges facing the upper left catch light."""
    relief = resize(bristles, w, h)
    return 1.0 + 0.22 * np.clip(relief - np.roll(relief, (light, light), axis=(0, 1)), -1.0, 1.0)


def oil_paint(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Thick brush strokes: quadrant smoothing, directional smears and lit impasto ridges."""
    h, w = image.shape[:2]
    u = unit(image)
    half = shrink(image, max(32, max(h, w) // 2))
    hu = unit(half)
    flat = _kuwahara(half, max(2, hu // 90))
    ctx.check()
    region = np.clip((fbm(ctx.rng, half.shape[0], half.shape[1], 4.0, 2) - 0.5) * 6 + 0.5, 0, 1)
    length = max(3, hu // 45) | 1
    smeared = saturate(to_u8(_strokes(flat, ctx.rng, length, region)), 1.25)
    bristles = _strokes(grain(ctx.rng, *half.shape[:2]), ctx.rng, length, region)
    ctx.check()
    # A faint canvas weave under the paint.
    weave = np.sin(np.arange(w, dtype=np.float32) * 2.1)[None, :] * np.sin(np.arange(h, dtype=np.float32) * 2.1)[:, None]
    shading = _relief(bristles, w, h, max(1, u // 400)) * (1.0 + 0.025 * weave)
    return to_u8(cv2.multiply(resize(smeared, w, h).astype(np.float32), per_channel(shading)))


def _lut(fn) -> np.ndarray:
    """A uint8 lookup table from a function on 0..1 floats."""
    x = np.linspace(0.0, 1.0, 256, dtype=np.float32)
    return np.clip(fn(x) * 255.0 + 0.5, 0, 255).astype(np.uint8)


def pastel(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Chalky pastel: soft shapes, pale low-saturation colours, grainy diagonal chalk strokes."""
    h, w = image.shape[:2]
    u = unit(image)
    hue, sat, val = cv2.split(cv2.cvtColor(soft_blur(image, u / 220), cv2.COLOR_RGB2HSV))
    sat = cv2.LUT(sat, _lut(lambda s: s * 0.6))
    val = cv2.LUT(val, _lut(lambda v: 0.66 + 0.34 * v))
    pale = cv2.cvtColor(cv2.merge([hue, sat, val]), cv2.COLOR_HSV2RGB)
    ctx.check()
    # Noise smeared along one diagonal, drawn at half size, reads as chalk dragged over paper.
    kernel = _stroke_kernel(max(3, u // 120) | 1, ctx.rng.uniform(0.5, 1.0))
    chalk = resize(cv2.filter2D(grain(ctx.rng, max(1, h // 2), max(1, w // 2)), -1, kernel), w, h)
    shading = (1.0 - 0.045 * np.clip(chalk * 2.0, -1.0, 1.0)) * 0.92
    # Out = pale * shading + 8% of a warm paper white.
    return to_u8(cv2.add(cv2.multiply(pale.astype(np.float32), per_channel(shading)), scalar((20.4, 19.5, 19.7))))
