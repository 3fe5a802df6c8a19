"""Vectorize: pre-quantised tracing with vtracer, the SVG sized to the original image.

vtracer's defaults on a noisy 1 MP photo take ~11.5 s and 4.6 MB of SVG. Capping the traced copy at
``MAX_TRACE_PIXELS`` and flattening it first (edge-preserving smoothing, a ``COLOURS``-colour
k-means palette) gives a few large shapes instead: well under a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np
import resvg_py
import vtracer

from imagekit.sandbox.engines.base import CheckFn
from imagekit.sandbox.engines.edits.codecs import encode_image

MAX_TRACE_PIXELS = 1024 * 1024
COLOURS = 24
_NOISY = 3.0  # grain std (grey levels) above which the image gets stronger smoothing
_SVG_TAG = re.compile(r"<svg\b[^>]*>")


@dataclass(frozen=True)
class VectorResult:
    """A vectorised image: the SVG text and its rendering."""

    svg: str
    """SVG whose width, height and viewBox are the original image's size in pixels."""
    preview: np.ndarray
    """The SVG rendered back at the original size, uint8 RGB (what raster downloads serve)."""


def _noise(image: np.ndarray) -> float:
    """Robust estimate of the grain's standard deviation (grey levels), from a 3x3 median residual."""
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    residual = np.abs(grey.astype(np.int16) - cv2.medianBlur(grey, 3))
    return 1.4826 * float(np.median(residual[:: max(residual.shape[0] // 256, 1)]))


def _palette(pixels: np.ndarray) -> np.ndarray:
    """``COLOURS`` k-means centres (float32) of a sample of the pixels."""
    cv2.setRNGSeed(0)  # k-means draws from this thread's generator
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 8, 1.0)
    sample = pixels[:: max(len(pixels) // 20_000, 1)].astype(np.float32)
    _, _, centres = cv2.kmeans(sample, min(COLOURS, len(sample)), None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    return centres


def _nearest(image: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Palette index of every pixel, through a 32x32x32 lookup table of nearest centres."""
    grid = (np.arange(32, dtype=np.float32) * 8 + 4)
    cube = np.stack(np.meshgrid(grid, grid, grid, indexing="ij"), axis=-1).reshape(-1, 3)
    table = np.argmin(((cube[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1).astype(np.uint8)
    bins = image >> 3
    return table[(bins[..., 0].astype(np.int32) << 10) | (bins[..., 1].astype(np.int32) << 5) | bins[..., 2]]


def _majority(labels: np.ndarray, count: int, check: CheckFn) -> np.ndarray:
    """Replace each label by the commonest one in its 5x5 neighbourhood: noise speckles, which make
    the tracer slow and the SVG large, disappear while region edges stay put."""
    best = np.zeros(labels.shape, np.uint16)
    winner = labels.copy()
    for k in range(count):
        check()
        votes = cv2.boxFilter((labels == k).view(np.uint8), cv2.CV_16U, (7, 7), normalize=False)
        better = votes > best
        best[better] = votes[better]
        winner[better] = k
    return winner


def _quantise(image: np.ndarray, check: CheckFn) -> np.ndarray:
    """Smooth noise away and reduce to a small palette so the tracer makes few, large shapes."""
    if _noise(image) > _NOISY:
        # Grain left in would fray every region edge into speckles: the tracer slows ~10x.
        smooth = cv2.bilateralFilter(image, 9, 60, 9)
        check()
        smooth = cv2.bilateralFilter(smooth, 9, 60, 9)
    else:
        smooth = cv2.bilateralFilter(image, 7, 40, 7)
    check()
    centres = _palette(smooth.reshape(-1, 3))
    labels = _majority(_nearest(smooth, centres), len(centres), check)
    return np.rint(centres[labels]).astype(np.uint8)


def _resize_svg(traced: str, traced_size: tuple[int, int], size: tuple[int, int]) -> str:
    """Give the traced SVG the original's width, height and viewBox, scaling its paths to match."""
    (tw, th), (w, h) = traced_size, size
    head = f'<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
    match = _SVG_TAG.search(traced)
    if match is None:
        raise RuntimeError("vtracer returned no <svg> element")
    body = traced[match.end() :].replace("</svg>", "")
    if (tw, th) != (w, h):
        body = f'<g transform="scale({w / tw:.6g} {h / th:.6g})">{body}</g>'
    return f"{head}{body}</svg>\n"


def render_svg(svg: str, size: tuple[int, int]) -> np.ndarray:
    """Rasterise an SVG at ``size`` (w, h) to uint8 RGB on white."""
    png = bytes(resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff"))
    rgba = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    if rgba is None:
        raise ValueError("resvg produced an image OpenCV cannot decode")
    rgb = cv2.cvtColor(rgba, cv2.COLOR_BGRA2RGB if rgba.shape[2] == 4 else cv2.COLOR_BGR2RGB)
    if (rgb.shape[1], rgb.shape[0]) != size:
        rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    return rgb


def vectorize(image: np.ndarray, check: CheckFn) -> VectorResult:
    """Trace ``image`` to SVG (sized as the original) and render it back; ``check`` between stages."""
    h, w = image.shape[:2]
    scale = min(1.0, (MAX_TRACE_PIXELS / (w * h)) ** 0.5)
    traced_size = (max(round(w * scale), 1), max(round(h * scale), 1))
    small = cv2.resize(image, traced_size, interpolation=cv2.INTER_AREA) if scale < 1 else image
    check()
    flat = _quantise(small, check)
    check()
    traced = vtracer.convert_raw_image_to_svg(
        encode_image(flat, "png"), img_format="png", colormode="color", hierarchical="stacked",
        mode="spline", filter_speckle=8, color_precision=6, layer_difference=16, path_precision=2,
    )
    check()
    svg = _resize_svg(traced, traced_size, (w, h))
    preview = render_svg(svg, (w, h))
    return VectorResult(svg=svg, preview=preview)
