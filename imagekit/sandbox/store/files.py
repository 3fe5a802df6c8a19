"""Pixels on disk under the data directory, written atomically (no half-written files)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import cv2
import numpy as np

from ..engines.edits.codecs import encode_image
from .disk import DiskSpace


class ImageStore:
    """Image files named by image id: ``<id>.png`` for pixels, ``<id>.svg`` for vectors (rendered
    variants are the render cache's, in ``cache/``: see :mod:`.render_cache`)."""

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
        stray = [path for path in self.root.iterdir() if path.is_file() and path.name not in owned]
        for path in stray:
            path.unlink(missing_ok=True)
        return len(stray)

    def write_pixels(self, image_id: int, pixels: np.ndarray) -> str:
        """Store RGB or RGBA pixels losslessly as PNG; returns the file name."""
        return self.write_bytes(f"{image_id}.png", encode_image(pixels, "png"))

    def read_pixels(self, name: str) -> np.ndarray:
        """RGB (or RGBA when the file has alpha) uint8 pixels."""
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
