"""Pixels on disk under the data directory, written atomically (no half-written files)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import cv2
import numpy as np

from .engines.edits.codecs import encode_image


class ImageStore:
    """Image files named by image id: ``<id>.png`` for pixels, ``<id>.svg`` for vectors."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, name: str) -> Path:
        return self.root / name

    def write_bytes(self, name: str, data: bytes) -> str:
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, self.root / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return name

    def write_pixels(self, image_id: int, pixels: np.ndarray) -> str:
        """Store RGB or RGBA pixels losslessly as PNG; returns the file name."""
        return self.write_bytes(f"{image_id}.png", encode_image(pixels, "png"))

    def read_pixels(self, name: str) -> np.ndarray:
        """RGB (or RGBA when the file has alpha) uint8 pixels."""
        data = np.fromfile(self.root / name, dtype=np.uint8)
        pixels = cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
        if pixels.ndim == 2:
            return cv2.cvtColor(pixels, cv2.COLOR_GRAY2RGB)
        code = cv2.COLOR_BGRA2RGBA if pixels.shape[2] == 4 else cv2.COLOR_BGR2RGB
        return cv2.cvtColor(pixels, code)

    def delete(self, *names: str | None) -> None:
        for name in names:
            if name:
                (self.root / name).unlink(missing_ok=True)

