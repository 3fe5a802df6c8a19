"""Measure an image's visible facts (colours, light, shape, detail, subject, layout) with numpy/cv2.

Everything runs on a copy no larger than 256 px on its long side, so the cost is flat in the input
size and the thresholds below (edge density, areas) mean the same thing for every input.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Literal, TypeVar

import cv2
import numpy as np

from .palette import NamedColour, name_colours
from .subject import BoxT, find_subject, largest_component, scale_box

Brightness = Literal["dark", "dim", "balanced", "bright", "high-key"]
Contrast = Literal["low", "normal", "high"]
Saturation = Literal["monochrome", "muted", "moderate", "vivid"]
Orientation = Literal["tall", "portrait", "square", "landscape", "panoramic"]
Detail = Literal["minimal", "moderate", "detailed", "busy"]
Horizontal = Literal["left", "centre", "right"]
Vertical = Literal["top", "middle", "bottom"]

_WORK_SIDE = 256
_COLOUR_SIDE = 128
_OPAQUE = 0.5
_CHROMATIC = 12.0
"""Lab chroma above which a pixel counts as coloured rather than grey."""
_COLOURED_SHARE = 0.02
"""Below this share of coloured pixels the image is monochrome (the colour list's cut too)."""
_HORIZON_SLOPE = 3.0
"""Vertical colour change (ΔE per working pixel) that counts as part of a horizon line."""

Name = TypeVar("Name", bound=str)


def _level(value: float, bounds: tuple[float, ...], names: tuple[Name, ...]) -> Name:
    """The name of the band ``value`` falls in; ``names`` has one more entry than ``bounds``."""
    return names[bisect_right(bounds, value)]


@dataclass(frozen=True)
class Composition:
    """Where the visual mass sits and which layout cues the image shows."""

    horizontal: Horizontal
    vertical: Vertical
    centre_of_mass: tuple[float, float]
    """(x, y) relative to the frame, 0..1; the subject's centroid when there is a subject."""
    symmetric: bool
    """Left and right halves mirror each other."""
    horizon: float | None
    """Relative height (0 top .. 1 bottom) of a straight full-width horizontal edge, or None."""


@dataclass(frozen=True)
class ImageFacts:
    """What :func:`describe` measured; captions are rendered from these and nothing else."""

    width: int
    height: int
    colours: tuple[NamedColour, ...]
    """Named colours of the opaque pixels, largest share first (shares of at least 2 %)."""
    luminance: float
    """Mean Lab lightness, 0 (black) .. 1 (white)."""
    brightness: Brightness
    luminance_spread: float
    """Standard deviation of Lab lightness, 0..0.5."""
    contrast: Contrast
    chroma: float
    """Mean Lab chroma of the coloured pixels (0 when there are none)."""
    saturation: Saturation
    orientation: Orientation
    edge_density: float
    """Share of pixels on a Canny edge at the 256 px working size."""
    detail: Detail
    subject_box: BoxT | None
    """(x, y, w, h) of the main subject in original pixels, or None when nothing stands out."""
    subject_colour: NamedColour | None
    """The main colour of the subject's own pixels (None without a subject)."""
    composition: Composition
    transparent: bool
    """The image has an alpha channel with a visible transparent area."""

    @property
    def subject_share(self) -> float:
        """Area of the subject box as a share of the frame (0 without a subject)."""
        if self.subject_box is None:
            return 0.0
        return self.subject_box[2] * self.subject_box[3] / (self.width * self.height)


def _validate(image: np.ndarray) -> None:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        raise ValueError("image must be a uint8 numpy array")
    if image.ndim != 3 or image.shape[2] not in (3, 4) or min(image.shape[:2]) < 1:
        raise ValueError(f"image must be (H, W, 3) RGB or (H, W, 4) RGBA, got shape {image.shape}")


def _working_copy(image: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Downscaled float RGB in 0..1 (colour of opaque pixels) and alpha in 0..1 (None if opaque)."""
    h, w = image.shape[:2]
    scale = min(1.0, _WORK_SIDE / max(h, w))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))

    def shrink(channels: np.ndarray) -> np.ndarray:
        # Resize while still uint8 (cheap at full size), then go to float on the small copy.
        small = cv2.resize(np.ascontiguousarray(channels), size, interpolation=cv2.INTER_AREA)
        return small.reshape(size[1], size[0], -1).astype(np.float32) / 255.0

    if image.shape[2] == 3 or bool((image[:, :, 3] == 255).all()):
        return shrink(image[:, :, :3]), None
    # Premultiply before averaging so hidden RGB under transparent pixels never bleeds into colours.
    alpha = image[:, :, 3:]
    premult = shrink(cv2.multiply(image[:, :, :3], np.repeat(alpha, 3, axis=2), scale=1 / 255))
    small_alpha = shrink(alpha)[:, :, 0]
    return np.clip(premult / np.maximum(small_alpha, 1e-6)[:, :, None], 0.0, 1.0), small_alpha


def _orientation(width: int, height: int) -> Orientation:
    return _level(width / height, (0.5, 1 / 1.08, 1.08, 2.0), ("tall", "portrait", "square", "landscape", "panoramic"))


def _saturation(chroma: np.ndarray, weights: np.ndarray) -> tuple[float, Saturation]:
    coloured = weights * (chroma > _CHROMATIC)
    if coloured.sum() < _COLOURED_SHARE * weights.sum():
        return 0.0, "monochrome"
    mean = float((chroma * coloured).sum() / coloured.sum())
    return mean, _level(mean, (25.0, 45.0), ("muted", "moderate", "vivid"))


def _horizon(slope_y: np.ndarray) -> float | None:
    """Relative row of a strong horizontal edge spanning most of the width, if any."""
    h, w = slope_y.shape
    if h < 10 or w < 10:
        return None
    # Let the line wander a couple of rows so a slightly soft or tilted horizon still counts.
    strong = cv2.dilate((slope_y > _HORIZON_SLOPE).astype(np.uint8), np.ones((5, 1), np.uint8))
    top = round(0.1 * h)
    coverage = strong.mean(axis=1)[top : round(0.9 * h)]
    first = int(np.argmax(coverage))
    # The line must span the width and stand out from the other rows (texture is strong everywhere).
    if coverage[first] < 0.7 or coverage[first] - float(np.median(coverage)) < 0.5:
        return None
    # The dilation turns the line into a plateau of equal rows; its middle is the line.
    last = first
    while last + 1 < len(coverage) and coverage[last + 1] == coverage[first]:
        last += 1
    return (top + (first + last) / 2) / (h - 1)


def _symmetric(grey: np.ndarray) -> bool:
    """Left and right mirror each other and the image varies across its width at all."""
    # Relative to the image's own left-right variation, so faint and strong images compare alike;
    # a plain horizontal band image (sky over ground) is mirror-equal but not "symmetric".
    spread = float(np.abs(grey - grey.mean(axis=1, keepdims=True)).mean())
    mirrored = float(np.abs(grey - grey[:, ::-1]).mean())
    return spread > 0.01 and mirrored < 0.2 * spread


def _centre_of_mass(weights: np.ndarray) -> tuple[float, float]:
    total = float(weights.sum())
    h, w = weights.shape
    if total <= 1e-6 or h < 2 or w < 2:
        return 0.5, 0.5
    ys, xs = np.mgrid[0:h, 0:w]
    return float((xs * weights).sum() / total / (w - 1)), float((ys * weights).sum() / total / (h - 1))


def describe(image: np.ndarray) -> ImageFacts:
    """Measure the facts a caption is built from; (H, W, 3) RGB or (H, W, 4) RGBA uint8."""
    _validate(image)
    height, width = image.shape[:2]
    rgb, alpha = _working_copy(image)
    h, w = rgb.shape[:2]
    opaque = np.ones((h, w), bool) if alpha is None else alpha >= _OPAQUE
    transparent, cutout = not bool(opaque.all()), bool(opaque.any())
    if not cutout:
        opaque[:] = True  # nothing is visible: describe the empty canvas as shown (black)
    lab = cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab)
    # Shapes, edges and layout are judged on the image as shown (over black), never on hidden RGB.
    shown = rgb if alpha is None else rgb * alpha[:, :, None]
    grey = cv2.cvtColor(shown, cv2.COLOR_RGB2GRAY)

    step = math.ceil(max(h, w) / _COLOUR_SIDE)
    sample, weights = lab[::step, ::step].reshape(-1, 3), opaque[::step, ::step].reshape(-1).astype(np.float64)
    lightness = sample[:, 0] / 100.0
    luminance = float((lightness * weights).sum() / weights.sum())
    spread = float(np.sqrt((((lightness - luminance) ** 2) * weights).sum() / weights.sum()))
    chroma, saturation = _saturation(np.hypot(sample[:, 1], sample[:, 2]), weights)

    edges = cv2.Canny((grey * 255).astype(np.uint8), 50, 150)
    edge_density = float((edges > 0).mean())

    # Colour slope in ΔE per pixel (a Sobel kernel sums 8 px-steps), so isoluminant edges count too.
    smooth = cv2.GaussianBlur(lab if alpha is None else cv2.cvtColor(shown, cv2.COLOR_RGB2Lab), (5, 5), 0)
    slope_x, slope_y = (np.linalg.norm(cv2.Sobel(smooth, cv2.CV_32F, dx, 1 - dx), axis=2) / 8 for dx in (1, 0))
    if alpha is None:
        found = find_subject(smooth, np.hypot(slope_x, slope_y))
    else:
        found = largest_component(opaque) if transparent and cutout else None
    if found is None:
        box, subject_colour = None, None
        mass = _centre_of_mass(np.hypot(slope_x, slope_y))  # no subject: the weight is where detail is
    else:
        blob, small_box = found
        box = scale_box(small_box, width / w, height / h, width, height)
        mass = _centre_of_mass(blob.astype(np.float32))
        subject_colour = name_colours(lab[blob], np.ones(int(blob.sum())))[0]

    return ImageFacts(
        width=width,
        height=height,
        colours=name_colours(sample, weights),
        luminance=round(luminance, 4),
        brightness=_level(luminance, (0.2, 0.4, 0.65, 0.85), ("dark", "dim", "balanced", "bright", "high-key")),
        luminance_spread=round(spread, 4),
        contrast=_level(spread, (0.08, 0.3), ("low", "normal", "high")),
        chroma=round(chroma, 2),
        saturation=saturation,
        orientation=_orientation(width, height),
        edge_density=round(edge_density, 4),
        detail=_level(edge_density, (0.03, 0.08, 0.16), ("minimal", "moderate", "detailed", "busy")),
        subject_box=box,
        subject_colour=subject_colour,
        composition=Composition(
            horizontal=_level(mass[0], (0.4, 0.6), ("left", "centre", "right")),
            vertical=_level(mass[1], (0.4, 0.6), ("top", "middle", "bottom")),
            centre_of_mass=(round(mass[0], 4), round(mass[1], 4)),
            symmetric=_symmetric(cv2.resize(grey, (min(w, 64), min(h, 64)), interpolation=cv2.INTER_AREA)),
            horizon=_horizon(slope_y),
        ),
        transparent=transparent,
    )
