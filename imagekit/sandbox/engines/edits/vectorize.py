"""Vectorize: pre-quantised tracing with vtracer, the SVG scaled back to the source's size."""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np
import resvg_py
import vtracer

from imagekit.sandbox.engines.base import CheckFn
from imagekit.sandbox.engines.edits.codecs import encode_image

MAX_TRACE_PIXELS = 1_000_000
"""vtracer's defaults on a noisy 1 MP photo take ~11.5 s and 4.6 MB; capped and quantised, < 1 s."""
COLOURS = 24


@dataclass(frozen=True)
class VectorResult:
    svg: str
    preview: np.ndarray
    """The SVG rendered back at the source's size (RGB), what raster types of the binary serve."""


def _quantise(image: np.ndarray) -> np.ndarray:
    """Smooth noise away and reduce to a small palette so the tracer makes few, large shapes."""
    smooth = cv2.bilateralFilter(image, 7, 40, 7)
    pixels = smooth.reshape(-1, 3).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 8, 1.0)
    cv2.setRNGSeed(0)
    sample = pixels[:: max(len(pixels) // 20000, 1)]
    _, _, centres = cv2.kmeans(sample, COLOURS, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    # Assign each distinct colour once instead of every pixel: far fewer distance computations.
    codes = smooth.reshape(-1, 3).astype(np.int32)
    keys = (codes[:, 0] << 16) | (codes[:, 1] << 8) | codes[:, 2]
    distinct, inverse = np.unique(keys, return_inverse=True)
    colours = np.stack([distinct >> 16, (distinct >> 8) & 255, distinct & 255], 1).astype(np.float32)
    nearest = np.argmin(((colours[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
    return centres[nearest[inverse]].astype(np.uint8).reshape(image.shape)


def vectorize(image: np.ndarray, check: CheckFn) -> VectorResult:
    """An SVG of the image and its rendering; width, height and viewBox match the source."""
    height, width = image.shape[:2]
    scale = min(1.0, (MAX_TRACE_PIXELS / (width * height)) ** 0.5)
    small = cv2.resize(image, (max(int(width * scale), 1), max(int(height * scale), 1)),
                       interpolation=cv2.INTER_AREA) if scale < 1 else image
    check()
    flat = _quantise(small)
    check()
    traced = vtracer.convert_raw_image_to_svg(encode_image(flat, "png"), img_format="png", colormode="color",
                                              hierarchical="stacked", mode="spline", filter_speckle=8,
                                              color_precision=6, layer_difference=16, path_precision=2)
    check()
    traced_h, traced_w = flat.shape[:2]
    svg = re.sub(r'<svg([^>]*?)width="\d+" height="\d+"',
                 rf'<svg\1width="{width}" height="{height}" viewBox="0 0 {traced_w} {traced_h}"', traced, count=1)
    rendered = np.frombuffer(bytes(resvg_py.svg_to_bytes(svg_string=svg)), np.uint8)
    preview = cv2.cvtColor(cv2.imdecode(rendered, cv2.IMREAD_UNCHANGED), cv2.COLOR_BGRA2RGB)
    check()
    return VectorResult(svg=svg, preview=preview)
