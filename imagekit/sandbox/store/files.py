"""Pixels on disk under the data directory, written atomically (no half-written files)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import cv2
import numpy as np

from ..engines.edits.codecs import encode_image
from .disk import DiskSpace

SUBJECT = ".subject.png"
"""Suffix of the file that keeps a generated image's subject mask beside its pixels."""


class ImageStore:
    """Image files named by image id: ``<id>.png`` for pixels, ``<id>.svg`` for vectors, and
    ``<id>.subject.png`` for the mask of what the engine drew as the subject (it belongs to the
    pixels' file: stored, swept and deleted with it). Rendered variants are the render cache's, in
    ``cache/``: see :mod:`.render_cache`."""

    def __init__(self, root: Path, disk: DiskSpace):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._disk = disk

    def path(self, name: str) -> Path:
        return self.root / name

    def write_bytes(self, name: str, data: bytes) -> str:
        """Store a file whole; 507 insufficient_storage when the folder has no room for it."""
        self._disk.ensure()
        with self._disk.writing():
            write_atomically(self.root / name, data)
        return name

    def sweep(self, owned: set[str]) -> int:
        """Remove files no image owns (and temporary files of interrupted writes); returns how many."""
        stray = [path for path in self.root.iterdir()
                 if path.is_file() and path.name not in owned and _pixels_of(path.name) not in owned]
        for path in stray:
            path.unlink(missing_ok=True)
        return len(stray)

    def write_pixels(self, image_id: int, pixels: np.ndarray, subject: np.ndarray | None = None) -> str:
        """Store RGB or RGBA pixels losslessly as PNG, and the subject's bool mask when known;
        returns the pixels' file name."""
        name = f"{image_id}.png"
        if subject is not None:
            self.write_bytes(name.removesuffix(".png") + SUBJECT, encode_image(subject.astype(np.uint8) * 255, "png"))
        return self.write_bytes(name, encode_image(pixels, "png"))

    def read_subject(self, name: str | None) -> np.ndarray | None:
        """The subject mask (bool (h, w)) kept with the pixels' file ``name``, or None."""
        path = self.root / (str(name).removesuffix(".png") + SUBJECT) if name else None
        if path is None or not path.is_file():
            return None
        mask = cv2.imdecode(np.fromfile(path, dtype=np.uint8), cv2.IMREAD_GRAYSCALE)
        return None if mask is None else mask > 127

    def read_pixels(self, name: str | None) -> np.ndarray:
        """RGB (or RGBA when the file has alpha) uint8 pixels of an image's file (``Image.file_name``,
        which only an image never completed lacks: ValueError)."""
        if name is None:
            raise ValueError("the image has no file: it never completed")
        data = np.fromfile(self.root / name, dtype=np.uint8)
        pixels = cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
        if pixels is None:
            raise ValueError(f"{name}: not an image OpenCV can read")
        if pixels.ndim == 2:
            return cv2.cvtColor(pixels, cv2.COLOR_GRAY2RGB)
        code = cv2.COLOR_BGRA2RGBA if pixels.shape[2] == 4 else cv2.COLOR_BGR2RGB
        return cv2.cvtColor(pixels, code)

    def delete(self, *names: str | None) -> None:
        """Remove stored files (of an image that was never committed: it has no cached variants)."""
        for name in names:
            if name:
                (self.root / name).unlink(missing_ok=True)
                if name.endswith(".png"):
                    (self.root / (name.removesuffix(".png") + SUBJECT)).unlink(missing_ok=True)


def _pixels_of(name: str) -> str | None:
    """The pixels' file a subject mask belongs to (None for any other file)."""
    return name.removesuffix(SUBJECT) + ".png" if name.endswith(SUBJECT) else None


def write_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same folder: readers see all of ``path`` or none."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
