"""The portrait composition: a head-and-shoulders figure in front of a soft bokeh background."""

from __future__ import annotations

import cv2
import numpy as np

from .noise import fbm
from .palette import Colour
from .raster import cv_colour, mix, soft_blur, to_u8
from .stage import Stage

_SKIN: tuple[Colour, ...] = ((236, 198, 170), (208, 160, 124), (160, 112, 80), (112, 76, 56))


def backdrop(st: Stage) -> np.ndarray:
    """A new canvas: diagonal gradient between sky colours with out-of-focus light discs."""
    rng = st.rng("bokeh")
    p = st.palette
    yy = np.linspace(0, 1, st.h, dtype=np.float32)[:, None]
    xx = np.linspace(0, 1, st.w, dtype=np.float32)[None, :]
    t = np.clip(0.65 * yy + 0.35 * xx + (fbm(rng, st.h, st.w, 1.5, 2) - 0.5) * 0.3, 0, 1)
    canvas = mix(np.broadcast_to(np.asarray(p.sky_top, np.float32), (st.h, st.w, 3)), p.far, t)
    lights = np.zeros((st.h, st.w, 3), np.float32)
    for _ in range(st.count(14, cap=120)):
        colour = p.light if rng.random() < 0.6 else p.accent
        centre = (round(rng.uniform(0, st.w)), round(rng.uniform(0, st.h)))
        cv2.circle(lights, centre, max(1, round(st.unit * rng.uniform(0.02, 0.07))),
                   tuple(float(c) * rng.uniform(0.2, 0.5) for c in colour), -1, cv2.LINE_AA)
    st.check()
    return to_u8(canvas + soft_blur(lights, st.unit / 150))


def figure(canvas: np.ndarray, st: Stage) -> None:
    """Shoulders, neck, head with hair, simple features and a rim of light."""
    rng = st.rng("figure")
    p = st.palette
    u = st.unit
    cx = st.w * rng.uniform(0.42, 0.58)
    head_y = st.h * 0.42
    skin = cv_colour(mix(np.asarray(_SKIN[int(rng.integers(len(_SKIN)))]), p.accent, 0.1))
    shade = cv_colour(mix(np.asarray(skin, np.float32), p.dark, 0.25))
    hair = cv_colour(mix(np.asarray(p.dark), p.accent, rng.uniform(0.0, 0.35)))
    cloth = cv_colour(mix(np.asarray(p.accent), p.dark, 0.25))
    head_axes = (round(u * 0.15), round(u * 0.2))
    # Shoulders reach below the frame; the neck joins them to the head.
    cv2.ellipse(canvas, (round(cx), round(st.h + u * 0.08)), (round(u * 0.42), round(u * 0.3)), 0, 180, 360,
                cloth, -1, cv2.LINE_AA)
    cv2.rectangle(canvas, (round(cx - u * 0.06), round(head_y)), (round(cx + u * 0.06), round(head_y + u * 0.3)),
                  shade, -1)
    cv2.ellipse(canvas, (round(cx), round(head_y - u * 0.04)), (round(u * 0.175), round(u * 0.2)), 0, 0, 360,
                hair, -1, cv2.LINE_AA)
    cv2.ellipse(canvas, (round(cx), round(head_y)), head_axes, 0, 0, 360, skin, -1, cv2.LINE_AA)
    fringe_tilt = rng.uniform(-15, 15)
    cv2.ellipse(canvas, (round(cx), round(head_y - u * 0.13)), (round(u * 0.16), round(u * 0.09)), fringe_tilt,
                180, 360, hair, -1, cv2.LINE_AA)
    for side in (-1, 1):
        eye = (round(cx + side * u * 0.055), round(head_y - u * 0.01))
        cv2.ellipse(canvas, eye, (max(1, round(u * 0.022)), max(1, round(u * 0.011))), 0, 0, 360,
                    cv_colour(p.dark), -1, cv2.LINE_AA)
        cv2.circle(canvas, (eye[0], round(head_y + u * 0.06)), max(1, round(u * 0.025)),
                   cv_colour(mix(np.asarray(skin, np.float32), (230, 110, 120), 0.3)), -1, cv2.LINE_AA)
    cv2.ellipse(canvas, (round(cx), round(head_y + u * 0.095)), (max(1, round(u * 0.035)), max(1, round(u * 0.012))),
                0, 0, 180, cv_colour(mix(np.asarray(skin, np.float32), p.dark, 0.5)), max(1, u // 250), cv2.LINE_AA)
    cv2.ellipse(canvas, (round(cx), round(head_y)), head_axes, 0, 200, 320, cv_colour(p.light), max(1, u // 200),
                cv2.LINE_AA)
