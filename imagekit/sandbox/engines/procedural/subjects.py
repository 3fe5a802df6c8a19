"""Things standing in a landscape: a skyline, trees, flowers, a cat, a blob creature."""

from __future__ import annotations

import cv2
import numpy as np

from .palette import Colour
from .raster import cv_colour, mix, poly_points, to_u8
from .stage import Stage

_GREEN: Colour = (62, 140, 70)


def _shade(c: Colour | np.ndarray, toward: Colour, t: float) -> tuple[int, int, int]:
    return cv_colour(mix(np.asarray(c), toward, t))


def skyline(canvas: np.ndarray, st: Stage) -> None:
    """Two rows of buildings on the horizon; the near row has a grid of lit windows."""
    rng = st.rng("skyline")
    p = st.palette
    rows = ((0.18, 0.42, _shade(p.far, p.sky_bottom, 0.45)), (0.08, 0.3, _shade(p.dark, p.near, 0.35)))
    for row, (lo, hi, colour) in enumerate(rows):
        st.check()
        x = -rng.uniform(0, 0.05) * st.w
        while x < st.w:
            bw = st.unit * rng.uniform(0.05, 0.13)
            top = st.horizon - st.h * rng.uniform(lo, hi)
            x0, x1 = round(x), round(x + bw)
            cv2.rectangle(canvas, (x0, round(top)), (x1, st.horizon), colour, -1)
            if rng.random() < 0.3:  # a spire or antenna on some roofs
                cx = (x0 + x1) // 2
                cv2.line(canvas, (cx, round(top)), (cx, round(top - st.h * 0.05)), colour, max(1, st.unit // 200))
            if row == 1:
                _windows(canvas, st, rng, x0, x1, round(top))
            x += bw * rng.uniform(0.75, 1.1)


def _windows(canvas: np.ndarray, st: Stage, rng: np.random.Generator, x0: int, x1: int, top: int) -> None:
    """Lit windows on a building front: a regular grid, each window on or off at random."""
    x0, x1 = max(0, x0), min(st.w, x1)
    top = max(0, top)
    if x1 - x0 < 4 or st.horizon - top < 4:
        return
    step = max(3, st.unit // 55)
    yy = np.arange(st.horizon - top)[:, None] - step // 2
    xx = np.arange(x1 - x0)[None, :] - step // 2
    lit = rng.random((yy.shape[0] // step + 2, xx.shape[1] // step + 2)) < 0.55
    mask = (yy % step < step * 0.55) & (xx % step < step * 0.5) & (yy >= 0) & (xx >= 0)
    mask &= xx < (x1 - x0 - step // 2)
    mask &= lit[np.clip(yy // step, 0, None), np.clip(xx // step, 0, None)]
    canvas[top:st.horizon, x0:x1][mask] = cv_colour(mix(np.asarray(st.palette.light), st.palette.accent, 0.3))


def _trunk(x: float, y: float, h: float) -> np.ndarray:
    return poly_points(np.array([x - h * 0.03, x + h * 0.03, x + h * 0.03, x - h * 0.03]),
                       np.array([y, y, y - h * 0.3, y - h * 0.3]))


def _conifer(x: float, y: float, h: float) -> list[np.ndarray]:
    """Three stacked triangles, each narrower and higher than the one below."""
    tiers = []
    for k in range(3):
        half, base, tip = h * 0.28 * (1 - 0.25 * k), y - h * (0.2 + 0.25 * k), y - h * (0.6 + 0.2 * k)
        tiers.append(poly_points(np.array([x - half, x, x + half]), np.array([base, tip, base])))
    return tiers


def trees(canvas: np.ndarray, st: Stage) -> None:
    """Rows of trees on the ground, smaller and hazier far away; conifers or round crowns by seed."""
    rng = st.rng("trees")
    p = st.palette
    conifer = rng.random() < 0.6
    for row in range(3):
        st.check()
        n = st.count(6 - row * 1.5, cap=200)
        base_y = st.ground_row(0.05 + 0.2 * row) + rng.uniform(0, st.h * 0.04, n)
        height = st.h * (0.12 + 0.09 * row) * rng.uniform(0.7, 1.3, n)
        xs = rng.uniform(0, st.w, n)
        haze = 0.45 - 0.22 * row
        leaf = _shade(mix(np.asarray(p.near), _GREEN, 0.3), p.sky_bottom, haze)
        spots = list(zip(xs, base_y, height))
        cv2.fillPoly(canvas, [_trunk(*s) for s in spots], _shade(p.dark, p.sky_bottom, haze), cv2.LINE_AA)
        if conifer:
            cv2.fillPoly(canvas, [tier for s in spots for tier in _conifer(*s)], leaf, cv2.LINE_AA)
            continue
        for x, y, h in spots:
            for dx, dy, r in ((0, 0.62, 0.24), (-0.13, 0.45, 0.18), (0.13, 0.47, 0.19)):
                cv2.circle(canvas, (round(x + dx * h), round(y - dy * h)), max(1, round(r * h)), leaf, -1,
                           cv2.LINE_AA)


def flowers(canvas: np.ndarray, st: Stage) -> None:
    """A foreground of flowers on stems, larger toward the viewer, petals in accent hues."""
    rng = st.rng("flowers")
    p = st.palette
    n = st.count(9, cap=250)
    ys = np.sort(rng.uniform(st.ground_row(0.25), st.h * 1.02, n))
    stem = _shade(_GREEN, p.near, 0.3)
    centre = cv_colour(p.light)
    for i, y in enumerate(ys):
        if i % 16 == 0:
            st.check()
        near = (y - st.floor) / max(st.h - st.floor, 1)
        size = st.unit * (0.012 + 0.035 * near) * rng.uniform(0.8, 1.2)
        x = rng.uniform(0, st.w)
        top = (x + rng.normal(0, size), y - size * rng.uniform(3, 6))
        cv2.line(canvas, (round(x), round(y)), (round(top[0]), round(top[1])), stem, max(1, round(size * 0.18)),
                 cv2.LINE_AA)
        hue_shift = rng.uniform(-0.25, 0.25)
        petal = _shade(p.accent, p.light if hue_shift > 0 else p.dark, abs(hue_shift))
        for a in np.linspace(0, 2 * np.pi, 6, endpoint=False) + rng.uniform(0, 1):
            cv2.circle(canvas, (round(top[0] + np.cos(a) * size * 0.7), round(top[1] + np.sin(a) * size * 0.7)),
                       max(1, round(size * 0.5)), petal, -1, cv2.LINE_AA)
        cv2.circle(canvas, (round(top[0]), round(top[1])), max(1, round(size * 0.35)), centre, -1, cv2.LINE_AA)


def cat(canvas: np.ndarray, st: Stage) -> None:
    """A sitting cat seen from behind-ish: body, head, ears, curled tail and two bright eyes."""
    rng = st.rng("cat")
    u = st.unit * rng.uniform(0.9, 1.1)
    cx = st.w * rng.uniform(0.35, 0.65)
    base = st.ground_row(0.55)
    colour = _shade(st.palette.dark, st.palette.accent, 0.15)
    body = (round(cx), round(base - u * 0.14))
    cv2.ellipse(canvas, body, (round(u * 0.12), round(u * 0.16)), 0, 0, 360, colour, -1, cv2.LINE_AA)
    head = (cx + u * 0.01, base - u * 0.33)
    cv2.circle(canvas, (round(head[0]), round(head[1])), round(u * 0.085), colour, -1, cv2.LINE_AA)
    for side in (-1, 1):
        ear_x = head[0] + side * u * np.array([0.085, 0.075, 0.02])
        ear = poly_points(ear_x, head[1] - u * np.array([0.02, 0.13, 0.07]))
        cv2.fillPoly(canvas, [ear], colour, cv2.LINE_AA)
        cv2.ellipse(canvas, (round(head[0] + side * u * 0.035), round(head[1] - u * 0.005)),
                    (max(1, round(u * 0.016)), max(1, round(u * 0.01))), 0, 0, 360,
                    cv_colour(st.palette.light), -1, cv2.LINE_AA)
    t = np.linspace(0, 1, 24)
    tail = poly_points(cx + u * (0.1 + 0.12 * np.sin(t * 2.4)), base - u * (0.02 + 0.2 * t ** 1.5))
    cv2.polylines(canvas, [tail], False, colour, max(1, round(u * 0.03)), cv2.LINE_AA)


def blob(canvas: np.ndarray, st: Stage) -> None:
    """A friendly organic creature: a wobbly shaded body with a shadow and two eyes."""
    rng = st.rng("blob")
    p = st.palette
    u = st.unit
    cx, cy = st.w * rng.uniform(0.35, 0.65), st.ground_row(0.3) - u * 0.12
    radius = u * rng.uniform(0.16, 0.22)
    theta = np.linspace(0, 2 * np.pi, 180, endpoint=False)
    # Low harmonics with random phases: a closed, smoothly wobbling outline.
    r = radius * (1 + sum(rng.uniform(0.03, 0.12) / k * 2 * np.sin(k * theta + rng.uniform(0, 6.3))
                          for k in range(2, 6)))
    shadow_c = (round(cx), round(cy + radius * 1.02))
    cv2.ellipse(canvas, shadow_c, (round(radius * 1.1), max(1, round(radius * 0.2))), 0, 0, 360,
                _shade(p.ground, p.dark, 0.6), -1, cv2.LINE_AA)
    mask = np.zeros(canvas.shape[:2], np.uint8)
    cv2.fillPoly(mask, [poly_points(cx + r * np.cos(theta), cy + r * np.sin(theta))], 255, cv2.LINE_AA)
    x0, y0, bw, bh = cv2.boundingRect(mask)
    if bw and bh:
        yy, xx = np.ogrid[y0:y0 + bh, x0:x0 + bw]
        # Lit from the upper left: lightness falls off from a highlight point.
        d = np.sqrt((xx - (cx - radius * 0.35)) ** 2 + (yy - (cy - radius * 0.4)) ** 2) / (radius * 1.8)
        body = mix(mix(np.full((bh, bw, 3), p.light, np.float32), p.accent, np.clip(d * 2.2, 0, 1)),
                   p.dark, np.clip(d - 0.55, 0, 0.6))
        alpha = mask[y0:y0 + bh, x0:x0 + bw].astype(np.float32) / 255.0
        canvas[y0:y0 + bh, x0:x0 + bw] = to_u8(mix(canvas[y0:y0 + bh, x0:x0 + bw], body, alpha))
    for side in (-1, 1):
        eye = (round(cx + side * radius * 0.3), round(cy - radius * 0.2))
        cv2.circle(canvas, eye, max(1, round(radius * 0.17)), (250, 250, 250), -1, cv2.LINE_AA)
        cv2.circle(canvas, (eye[0] + round(radius * 0.04), eye[1]), max(1, round(radius * 0.08)),
                   cv_colour(p.dark), -1, cv2.LINE_AA)
