"""Backdrop layers of a landscape: sky, sun or moon, clouds, ridges of land and the sea."""

from __future__ import annotations

import cv2
import numpy as np

from .noise import fbm, noise1d
from .palette import Colour
from .raster import cv_colour, mix, planes, poly_points, to_u8
from .stage import Stage


def sky(st: Stage) -> np.ndarray:
    """A new canvas: vertical sky gradient down to the horizon with a soft mottled variation."""
    rng = st.rng("sky")
    p = st.palette
    t = np.clip(np.arange(st.h, dtype=np.float32) / max(st.horizon, 1), 0.0, 1.0) ** 1.2
    column = np.asarray(p.sky_top, np.float32) + np.outer(t, np.subtract(p.sky_bottom, p.sky_top, dtype=np.float32))
    mottle = (fbm(rng, st.h, st.w, 2.0, 3) - 0.5) * 22.0
    return to_u8(planes([column[:, c:c + 1] + mottle for c in range(3)]))


def _glow_disc(canvas: np.ndarray, cx: float, cy: float, r: float, colour: Colour, glow: float) -> None:
    """A filled disc with a soft halo, blended in place within its bounding box."""
    reach = r * 5.0
    x0, x1 = max(0, int(cx - reach)), min(canvas.shape[1], int(cx + reach) + 1)
    y0, y1 = max(0, int(cy - reach)), min(canvas.shape[0], int(cy + reach) + 1)
    if x0 >= x1 or y0 >= y1:
        return
    yy, xx = np.ogrid[y0:y1, x0:x1]
    d2 = ((xx - cx) ** 2 + (yy - cy) ** 2).astype(np.float32) / (r * r)
    alpha = glow * np.exp(-d2 / 6.0)
    canvas[y0:y1, x0:x1] = to_u8(mix(canvas[y0:y1, x0:x1], colour, alpha))
    cv2.circle(canvas, (round(cx * 16), round(cy * 16)), round(r * 16), cv_colour(colour), -1,
               cv2.LINE_AA, shift=4)


def celestial(canvas: np.ndarray, st: Stage, body: str) -> float:
    """Draw a ``sun`` (with a wide glow) or a ``moon`` (with craters) in the sky; returns its x."""
    rng = st.rng(body)
    r = st.unit * rng.uniform(0.05, 0.085)
    cx = st.w * rng.uniform(0.2, 0.8)
    if body == "sun":
        cy = st.horizon * rng.uniform(0.3, 0.65)
        _glow_disc(canvas, cx, cy, r, st.palette.light, 0.55)
        return cx
    cy = st.horizon * rng.uniform(0.2, 0.4)
    _glow_disc(canvas, cx, cy, r, st.palette.light, 0.35)
    for _ in range(4):  # craters: darker dabs inside the disc
        a, d = rng.uniform(0, 2 * np.pi), r * rng.uniform(0.1, 0.6)
        cv2.circle(canvas, (round(cx + d * np.cos(a)), round(cy + d * np.sin(a))),
                   max(1, round(r * rng.uniform(0.1, 0.22))),
                   cv_colour(mix(np.asarray(st.palette.light), st.palette.sky_bottom, 0.12)), -1,
                   cv2.LINE_AA)
    return cx


def stars(canvas: np.ndarray, st: Stage) -> None:
    """Scatter stars over the sky, brighter ones a little larger."""
    rng = st.rng("stars")
    n = st.count(160, cap=3000)
    xs = rng.integers(0, st.w, n)
    ys = (st.horizon * rng.random(n) ** 1.4).astype(np.int64)
    bright = rng.uniform(0.35, 1.0, n).astype(np.float32)
    canvas[ys, xs] = to_u8(mix(canvas[ys, xs], st.palette.light, bright[:, None]))
    size = max(1, round(st.unit / 500))
    for x, y in zip(xs[bright > 0.92], ys[bright > 0.92]):
        cv2.circle(canvas, (int(x), int(y)), size, cv_colour(st.palette.light), -1, cv2.LINE_AA)


def clouds(canvas: np.ndarray, st: Stage) -> None:
    """Soft clusters of ellipses, blurred and blended over the sky."""
    rng = st.rng("clouds")
    f = min(1.0, 256 / st.unit)  # draw small: clouds are blurry anyway
    sh, sw = max(8, round(st.h * f)), max(8, round(st.w * f))
    mask: np.ndarray = np.zeros((sh, sw), np.float32)
    for _ in range(st.count(2.5, cap=40)):
        cx, cy = rng.uniform(0, sw), rng.uniform(0.08, 0.75) * st.horizon * f
        size = min(sh, sw) * rng.uniform(0.05, 0.1)
        for _ in range(int(rng.integers(4, 8))):
            ox, oy = rng.normal(0, size * 1.3), rng.normal(0, size * 0.3)
            axes = (max(1, round(size * rng.uniform(0.8, 1.6))), max(1, round(size * rng.uniform(0.5, 0.9))))
            cv2.ellipse(mask, (round(cx + ox), round(cy + oy)), axes, 0, 0, 360, 1.0, -1, cv2.LINE_AA)
    st.check()
    mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, min(sh, sw) / 80))
    mask = cv2.resize(mask, (st.w, st.h), interpolation=cv2.INTER_LINEAR)
    colour = mix(np.asarray(st.palette.light), st.palette.sky_bottom, 0.25)
    canvas[:] = to_u8(mix(canvas, colour, np.clip(mask, 0, 1) * 0.85))


_RIDGES = {
    # kind: (layers, cells, octaves, height above horizon (share of h), ridged, snow)
    "mountains": (4, 1.6, 5, 0.3, False, True),
    "hills": (3, 1.0, 2, 0.12, False, False),
    "dunes": (4, 1.4, 2, 0.1, True, False),
}


def _layer_colour(st: Stage, i: int, n: int) -> Colour:
    """Atmospheric perspective: far layers fade into the sky, near ones reach the ground colour."""
    p = st.palette
    t = i / max(n - 1, 1)
    base = mix(np.asarray(p.far), p.near, t)
    return tuple(mix(base, p.sky_bottom, 0.45 * (1 - t) ** 2))


def ridges(canvas: np.ndarray, st: Stage, kind: str) -> None:
    """Layered land silhouettes (mountains, hills or dunes) from far to near; the nearest is ground."""
    rng = st.rng(kind)
    layers, cells, octaves, height, ridged, snow = _RIDGES[kind]
    n = max(2, st.w // 4 + 2)
    xs = np.linspace(0, st.w, n, dtype=np.float32)
    for i in range(layers):
        st.check()
        profile = noise1d(rng, n, cells * (1 + 0.6 * i) * st.w / st.unit, octaves)
        if ridged:
            profile = 1.0 - np.abs(2.0 * profile - 1.0)
        profile = (profile - profile.min()) / max(float(np.ptp(profile)), 1e-6)
        amp = st.h * height * (1.0 - 0.3 * i)
        top = st.horizon + st.h * 0.04 * i - amp * (0.2 + 0.8 * profile ** 1.7)
        if i == layers - 1:
            ground(canvas, st, np.interp(np.arange(st.w), xs, top).astype(np.float32))
            break
        outline = poly_points(np.r_[xs, st.w, 0], np.r_[top, st.h, st.h])
        cv2.fillPoly(canvas, [outline], cv_colour(_layer_colour(st, i, layers)), cv2.LINE_AA)
        if snow and i == 0:
            line = top.min() + (st.horizon - top.min()) * 0.3
            depth = st.h * 0.04 * (0.6 + noise1d(rng, n, 6.0 * st.w / st.unit, 2))
            lower = np.minimum(top + depth, np.maximum(top, line))
            cap = poly_points(np.r_[xs, xs[::-1]], np.r_[top, lower[::-1]])
            cv2.fillPoly(canvas, [cap], cv_colour(mix(np.asarray(st.palette.light), st.palette.sky_top, 0.15)),
                         cv2.LINE_AA)


def ground(canvas: np.ndarray, st: Stage, top: float | np.ndarray) -> None:
    """Textured ground below ``top`` (one row, or a row per column), darkening toward the viewer."""
    tops = np.broadcast_to(np.asarray(top, np.float32), (st.w,))
    y0 = int(np.clip(np.floor(tops.min()), 0, st.h))
    if y0 >= st.h:
        return
    rows = np.arange(y0, st.h, dtype=np.float32)[:, None]
    shade = 1.0 - 0.3 * (rows - y0) / max(st.h - y0, 1)
    p = st.palette
    colour = mix(np.asarray(p.near), p.ground, 0.6)
    texture = (fbm(st.rng("ground"), st.h - y0, st.w, 6.0, 2) - 0.5) * 20.0
    land = planes([colour[c] * shade + texture for c in range(3)])
    # A one-pixel soft edge along the profile instead of a jagged one.
    alpha = np.clip(rows - tops[None, :] + 0.5, 0.0, 1.0)
    canvas[y0:] = to_u8(mix(canvas[y0:], land, alpha))


def sea(canvas: np.ndarray, st: Stage, sun_x: float | None) -> None:
    """Water from the horizon down: perspective wave bands, lighter crests, the sun's glitter path."""
    rng = st.rng("sea")
    p = st.palette
    rows = st.h - st.horizon
    if rows <= 0:
        return
    depth = np.linspace(0.0, 1.0, rows, dtype=np.float32)[:, None]
    base = mix(np.asarray(p.far), p.sky_bottom, 0.45)
    water = planes([base[c] + depth * (p.near[c] - base[c]) for c in range(3)], (rows, st.w))
    x = np.arange(st.w, dtype=np.float32)[None, :] / st.unit
    # Bands get wider toward the viewer: phase grows with log distance from the horizon.
    phase = np.log(depth + 0.02) * 22.0 + 1.6 * np.sin(x * (3.0 + 9.0 * (1 - depth)) + rng.uniform(0, 6.3))
    phase += (fbm(rng, rows, st.w, 3.0, 2) - 0.5) * 6.0
    crest = np.clip((np.sin(phase) - 0.55) / 0.45, 0.0, 1.0) * (0.25 + 0.55 * depth)
    if sun_x is not None:
        path = np.exp(-(((x * st.unit - sun_x) / (st.unit * (0.03 + 0.12 * depth))) ** 2))
        crest = np.maximum(crest, path * np.clip(np.sin(phase * 1.7), 0, 1) * 0.9)
    st.check()
    canvas[st.horizon:] = to_u8(mix(water, p.light, crest))
