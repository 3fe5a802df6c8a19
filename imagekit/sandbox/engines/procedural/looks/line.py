"""Line-based looks: glowing neon, ink sketch with hatching, and a technical blueprint."""

from __future__ import annotations

import cv2
import numpy as np

from ..noise import fbm, grain
from ..raster import edge_mask, luma, mix, per_channel, scalar, soft_blur, stretch, to_u8
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
    tubes = tubes.astype(np.float32)
    light = cv2.multiply(tubes, per_channel(core))
    ctx.check()
    halo = cv2.addWeighted(soft_blur(light, u / 300), 2.5, soft_blur(light, u / 70), 5.0, 0.0)
    # The scene stays faintly visible, as if lit at night by the tubes: dim and blue-violet.
    ground = cv2.add(cv2.multiply(image.astype(np.float32), scalar((0.3, 0.26, 0.42))), scalar((8, 4, 20)))
    hot = tubes * np.float32(0.55) + np.float32(255 * 0.45)
    return to_u8(mix(cv2.add(ground, halo), hot, core))


def _stripes(offset: np.ndarray, period: float, width: float) -> np.ndarray:
    """Anti-aliased parallel stripes along the level lines of ``offset`` (>= 0): 1 on a stripe's
    centre line, 0 between stripes."""
    phase = offset * (1.0 / period)
    phase -= np.floor(phase)  # far cheaper than float ``%`` on large arrays
    d = np.abs(phase - 0.5) * period
    return np.clip((width / 2 + 0.5) - d, 0.0, 1.0)


def ink_sketch(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """Pen drawing on cream paper: contour lines, hatching in mid tones, cross-hatching in shadows."""
    h, w = image.shape[:2]
    u = unit(image)
    grey = cv2.GaussianBlur(luma(image), (0, 0), max(0.8, u / 500))  # keeps film grain out of the contours
    # Colour dodge of the grey by its blurred negative leaves only the contours dark.
    dodge = cv2.divide(grey, 255 - cv2.GaussianBlur(255 - grey, (0, 0), max(1.0, u / 160)), scale=256)
    lines = np.clip((1.0 - dodge.astype(np.float32) / 255.0) * 3.0, 0.0, 1.0)
    tone = cv2.GaussianBlur(stretch(grey), (0, 0), max(1.0, u / 120)).astype(np.float32) / 255.0
    ctx.check()
    period = max(3.0, u / 85)
    width = max(1.0, period * 0.28)
    wobble = (fbm(ctx.rng, h, w, 5.0, 2) + 1.0) * period * 1.5
    ys, xs = np.arange(h, dtype=np.float32)[:, None], np.arange(w, dtype=np.float32)[None, :]
    hatch = _stripes(xs + ys + wobble, period, width) * np.clip((0.62 - tone) * 8, 0, 1)
    cross = _stripes(xs + (h - ys) + wobble, period, width) * np.clip((0.36 - tone) * 8, 0, 1)
    ink = np.maximum(lines, np.maximum(hatch, cross) * 0.8)
    ctx.check()
    paper = cv2.multiply(per_channel(1.0 - 0.02 * grain(ctx.rng, h, w)), scalar((246, 240, 226)))
    return to_u8(mix(paper, (36, 30, 40), ink))


def blueprint(image: np.ndarray, ctx: LookContext) -> np.ndarray:
    """White technical linework and a faint tonal fill on blue paper with a drafting grid."""
    h, w = image.shape[:2]
    u = unit(image)
    shade = np.linspace(1.05, 0.9, h, dtype=np.float32)[:, None] * (0.95 + 0.1 * fbm(ctx.rng, h, w, 8.0, 2))
    paper = cv2.multiply(per_channel(shade), scalar((24, 70, 140)))
    fill = stretch(luma(image)).astype(np.float32) / 255.0
    out = mix(paper, (120, 170, 225), fill * 0.6)
    step = max(4, u // 32)
    yy, xx = np.arange(h)[:, None], np.arange(w)[None, :]
    minor = (((yy % step) == 0) | ((xx % step) == 0)).astype(np.float32)
    major = (((yy % (step * 4)) == 0) | ((xx % (step * 4)) == 0)).astype(np.float32)
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
