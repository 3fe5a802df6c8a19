"""Line-based looks: glowing neon, ink sketch with hatching, and a technical blueprint."""

from __future__ import annotations

import cv2
import numpy as np

from ..raster import edge_mask, fbm, grain, luma, mix, soft_blur, to_u8
from .context import LookContext, unit


def neon(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Glowing tubes of saturated colour tracing the scene's edges over a near-black ground."""
    h, w = image.shape[:2]
    u = unit(image)
    core = edge_mask(image, max(1, u // 300), 30, 90).astype(np.float32) / 255.0
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
    # Greyish areas have no hue worth keeping: give them magenta-to-cyan from a smooth field.
    fallback = (140 + 60 * fbm(ctx.rng, h, w, 1.5, 1)).astype(np.uint8) % 180
    hue = np.where(hsv[..., 1] > 70, hsv[..., 0], fallback)
    tubes = cv2.cvtColor(np.dstack([hue, np.full_like(hue, 235), np.full_like(hue, 255)]), cv2.COLOR_HSV2RGB)
    light = tubes.astype(np.float32) * core[..., None]
    ctx.check()
    halo = soft_blur(light, u / 300) * 2.5 + soft_blur(light, u / 70) * 5.0
    ground = image.astype(np.float32) * 0.12 + np.array([12, 6, 26], np.float32)
    hot = mix(tubes.astype(np.float32), (255, 255, 255), 0.45)
    return to_u8(mix(ground + halo, hot, core))


def _stripes(xx: np.ndarray, period: float, width: float) -> np.ndarray:
    """Anti-aliased parallel stripes: 1 on a stripe's centre line, 0 between stripes."""
    d = np.abs((xx % period) - period / 2)
    return np.clip((width / 2 - d) + 0.5, 0.0, 1.0)


def ink_sketch(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Pen drawing on cream paper: contour lines, hatching in mid tones, cross-hatching in shadows."""
    h, w = image.shape[:2]
    u = unit(image)
    grey = luma(image)
    # Colour dodge of the grey by its blurred negative leaves only the contours dark.
    dodge = cv2.divide(grey, 255 - cv2.GaussianBlur(255 - grey, (0, 0), max(1.0, u / 160)), scale=256)
    lines = np.clip((1.0 - dodge.astype(np.float32) / 255.0) * 3.0, 0.0, 1.0)
    tone = cv2.GaussianBlur(grey, (0, 0), max(1.0, u / 120)).astype(np.float32) / 255.0
    ctx.check()
    period = max(3.0, u / 85)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    wobble = (fbm(ctx.rng, h, w, 5.0, 2) - 0.5) * period * 1.5
    width = max(1.0, period * 0.28)
    hatch = _stripes(xx + yy + wobble, period, width) * np.clip((0.62 - tone) * 8, 0, 1)
    cross = _stripes(xx - yy + wobble, period, width) * np.clip((0.36 - tone) * 8, 0, 1)
    ink = np.maximum(lines, np.maximum(hatch, cross) * 0.8)
    paper = np.array([246, 240, 226], np.float32) * (1.0 - 0.02 * grain(ctx.rng, h, w))[..., None]
    return to_u8(mix(paper, (36, 30, 40), ink))


def blueprint(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """White technical linework and a faint tonal fill on blue paper with a drafting grid."""
    h, w = image.shape[:2]
    u = unit(image)
    shade = np.linspace(1.05, 0.9, h, dtype=np.float32)[:, None, None]
    paper = np.array([24, 70, 140], np.float32) * shade * (0.95 + 0.1 * fbm(ctx.rng, h, w, 8.0, 2))[..., None]
    fill = luma(image).astype(np.float32) / 255.0
    out = mix(paper, (120, 170, 225), fill * 0.45)
    step = max(4, u // 32)
    yy, xx = np.arange(h)[:, None], np.arange(w)[None, :]
    minor = ((yy % step) == 0) | ((xx % step) == 0)
    major = ((yy % (step * 4)) == 0) | ((xx % (step * 4)) == 0)
    out = mix(out, (200, 225, 255), minor * 0.12 + major * 0.18)
    ctx.check()
    lines = edge_mask(image, max(1, u // 400), 30, 90).astype(np.float32) / 255.0
    out = mix(out, (236, 244, 255), lines * 0.92)
    # A title block in the lower right corner, as on a drawing sheet.
    bw, bh, m = round(w * 0.22), round(h * 0.08), max(2, u // 40)
    ink, thick = (236, 244, 255), max(1, u // 300)
    cv2.rectangle(out, (m, m), (w - m, h - m), ink, thick)
    cv2.rectangle(out, (w - m - bw, h - m - bh), (w - m, h - m), ink, thick)
    cv2.line(out, (w - m - bw, h - m - bh // 2), (w - m, h - m - bh // 2), ink, thick)
    return to_u8(out)
