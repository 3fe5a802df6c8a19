"""An image's binary as asked: the stored pixels as jpeg, png, webp or svg, scaled, watermarked;
every variant but the stored file is rendered once into the render cache (``Renderer``).
``api.binaries`` turns a ``Binary`` into the HTTP answer."""

from __future__ import annotations

import re
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import cv2
import numpy as np

from ..engines.edits.codecs import check_output_size, encode_image
from ..interface.errors import SandboxError
from ..store.files import ImageStore
from ..store.render_cache import RenderCache
from ..store.tables import Image

MEDIA_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp", "svg": "image/svg+xml"}
_SCALE = re.compile(r"^([1-8])x$")
_MARK = "imagekit sandbox"
_BAND = 256
_STRIPES = 64


def parse_scale(scale: str | None) -> int:
    """'2x' -> 2; the spec's pattern is a digit then x, and 1x..8x are the sizes that exist."""
    if scale is None:
        return 1
    match = _SCALE.match(scale)
    if match is None:
        raise SandboxError("invalid_request", f"scaleSize must be 1x to 8x, not {scale!r}.")
    return int(match.group(1))


def _strips(height: int) -> range:
    """Row offsets of bands processed one at a time: float copies of a band stay a few MB."""
    return range(0, height, _BAND)


def watermark(pixels: np.ndarray) -> np.ndarray:
    """Tile a translucent diagonal text mark over the whole image (in place, band by band)."""
    height, width = pixels.shape[:2]
    unit = max(width, height) / 1024
    side = int(np.hypot(width, height)) + 1
    layer: np.ndarray = np.zeros((side, side), np.uint8)  # then OpenCV's warp of it
    scale, thickness = 1.4 * unit, max(int(round(3 * unit)), 1)
    (text_w, text_h), _ = cv2.getTextSize(_MARK, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
    for row, y in enumerate(range(text_h, side, int(text_h * 4))):
        for x in range(-(row % 2) * text_w // 2, side, int(text_w * 1.3)):
            cv2.putText(layer, _MARK, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, 255, thickness, cv2.LINE_AA)
    rotation = cv2.getRotationMatrix2D((side / 2, side / 2), 30, 1.0)
    rotation[:, 2] -= ((side - width) / 2, (side - height) / 2)
    layer = cv2.warpAffine(layer, rotation, (width, height))
    for top in _strips(height):
        band = slice(top, top + _BAND)
        alpha = (layer[band].astype(np.float32) / 255 * 0.4)[..., None]
        rgb = pixels[band, :, :3].astype(np.float32)
        pixels[band, :, :3] = (rgb * (1 - alpha) + 255 * alpha).round().astype(np.uint8)
    return pixels


def _flattened(pixels: np.ndarray) -> np.ndarray:
    """RGBA composited onto white as RGB, band by band (JPEG has no alpha)."""
    if pixels.shape[2] == 3:
        return pixels
    out = np.empty(pixels.shape[:2] + (3,), np.uint8)
    for top in _strips(pixels.shape[0]):
        band = slice(top, top + _BAND)
        alpha = pixels[band, :, 3:4].astype(np.uint16)
        out[band] = ((pixels[band, :, :3] * alpha + 255 * (255 - alpha) + 127) // 255).astype(np.uint8)
    return out


def _scaled_svg(svg: str, scale: int) -> str:
    """The same drawing at ``scale`` times its size (viewBox kept, width/height multiplied)."""
    def grow(match: re.Match) -> str:
        return f'{match.group(1)}="{float(match.group(2)) * scale:g}"'
    head, sep, rest = svg.partition(">")
    return re.sub(r'\b(width|height)="([\d.]+)"', grow, head) + sep + rest


@dataclass
class Binary:
    """An image as asked: a stored file, an open cached variant, or bytes rendered for this answer
    alone (not cached: larger than the cache, or no room on the disk)."""

    media_type: str
    path: Path | None = None
    handle: BinaryIO | None = None
    data: bytes | None = None

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


class Renderer:
    """Binaries other than the stored file, rendered once into the render cache and streamed from there.

    An 8x render holds a few hundred MB while it runs, so at most ``slots`` renders run at once (the
    others wait their turn), and concurrent requests for one variant wait for a single render."""

    def __init__(self, store: ImageStore, cache: RenderCache, slots: int = 1):
        self._store = store
        self.cache = cache
        self._slots = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(_STRIPES)]
        """Requests for one variant share a stripe, so it is rendered once; the set stays bounded."""
        self._running = 0
        self.renders = 0
        """Renders done since start (read by tests)."""
        self.peak = 0
        """Most renders that ever ran at once (read by tests and benchmarks)."""

    def file(self, image: Image, kind: str | None, scale: int, marked: bool) -> Binary:
        """An image as asked (see :class:`Binary`)."""
        if image.status != "COMPLETED":
            raise SandboxError("image_not_ready", f"Image {image.image_id} is {image.status}.")
        kind = kind or ("svg" if image.vector_file else "png")
        if kind == "svg" and not image.vector_file:
            raise SandboxError("svg_not_available", "Only vectorized images have an SVG; ask for jpeg, png or webp.")
        if kind != "svg":
            check_output_size(image.width * scale, image.height * scale)
        if scale == 1 and (kind == "svg" or (kind == "png" and not marked)):
            name = image.vector_file if kind == "svg" else image.file_name
            # the SVG was checked above; a COMPLETED image has its pixels (both set in one write)
            assert name is not None
            return Binary(MEDIA_TYPES[kind], path=self._store.path(name))
        name = f"{image.image_id}-{scale}x{'-marked' if marked and kind != 'svg' else ''}.{kind}"
        with self._stripes[zlib.crc32(name.encode()) % _STRIPES]:
            handle = self.cache.open(name)
            if handle is None:
                with self._slots:
                    self._count(+1)
                    try:
                        data = _render(image, self._store, kind, scale, marked)
                    finally:
                        self._count(-1)
                handle = self.cache.put(name, data)
                if handle is None:
                    return Binary(MEDIA_TYPES[kind], data=data)
        return Binary(MEDIA_TYPES[kind], handle=handle)

    def _count(self, step: int) -> None:
        with self._lock:
            self._running += step
            if step > 0:
                self.renders += 1
                self.peak = max(self.peak, self._running)


def _render(image: Image, store: ImageStore, kind: str, scale: int, marked: bool) -> bytes:
    # Renderer.file checked that the image is COMPLETED (its file set in the same write) and,
    # for an SVG, that it was vectorized.
    if kind == "svg":
        assert image.vector_file is not None
        return _scaled_svg(store.path(image.vector_file).read_text(), scale).encode()
    assert image.file_name is not None
    pixels = store.read_pixels(image.file_name)
    if scale > 1:
        pixels = cv2.resize(pixels, (image.width * scale, image.height * scale), interpolation=cv2.INTER_LANCZOS4)
    if marked:
        pixels = watermark(pixels)
    return encode_image(_flattened(pixels) if kind == "jpeg" else pixels, kind)
