"""Synthetic scenes for the signal tests: shapes over a gradient, each seed a different picture."""

from __future__ import annotations

import io

import cv2
import numpy as np
from PIL import Image


def scene(seed: int, size: int = 512) -> np.ndarray:
    """An RGB ``uint8`` picture: a two-colour gradient with a dozen filled shapes and lines."""
    rng = np.random.default_rng(seed)
    top, bottom = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    ramp = np.linspace(0, 1, size)[:, None, None]
    picture = np.ascontiguousarray((top * (1 - ramp) + bottom * ramp).repeat(size, axis=1).astype(np.uint8))
    for _ in range(12):
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        x, y = (int(v) for v in rng.integers(0, size, 2))
        radius = int(rng.integers(size // 20, size // 5))
        if rng.random() < 0.5:
            cv2.circle(picture, (x, y), radius, colour, -1, cv2.LINE_AA)
        else:
            cv2.rectangle(picture, (x, y), (x + radius, y + radius // 2), colour, -1)
        cv2.line(picture, (x, 0), (size - y, size - 1), colour, 2, cv2.LINE_AA)
    return picture


def jpeg(picture: np.ndarray, quality: int = 60, scale: float = 1.0) -> bytes:
    """The picture scaled by ``scale`` and saved as a JPEG of that quality."""
    image = Image.fromarray(picture)
    if scale != 1.0:
        image = image.resize((round(image.width * scale), round(image.height * scale)), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue()


def cropped(picture: np.ndarray, share: float) -> np.ndarray:
    """The picture with ``share`` of its side cut from each edge."""
    height, width = picture.shape[:2]
    dy, dx = round(height * share), round(width * share)
    return picture[dy:height - dy, dx:width - dx]


def noisy(picture: np.ndarray, sigma: float, seed: int = 0) -> np.ndarray:
    """The picture with Gaussian noise of ``sigma`` grey levels added."""
    rng = np.random.default_rng(seed)
    return np.clip(picture + rng.normal(0, sigma, picture.shape), 0, 255).round().astype(np.uint8)
