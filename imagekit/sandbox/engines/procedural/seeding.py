"""Deterministic random streams: every random number of a drawing comes from a keyed hash.

Python's ``hash()`` is salted per process and the global NumPy state is shared, so neither may
feed a drawing. Instead each request gets a stable key (BLAKE2b of its content) and every stage
draws from its own ``Generator(PCG64)`` derived from that key and a stage label. Separate streams
mean that changing one stage (say, the look) leaves the others' numbers untouched: the same
prompt and seed keep their composition under every style.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np

from ..base import RGB


def digest(*parts: object) -> bytes:
    """A stable 32-byte digest of JSON-able parts (strings, numbers, lists, None, bytes)."""
    h = hashlib.blake2b(digest_size=32)
    for part in parts:
        if isinstance(part, bytes):
            h.update(b"b" + len(part).to_bytes(8, "little") + part)
        else:
            text = json.dumps(part, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            h.update(b"j" + text.encode())
        # A separator keeps ("ab", "c") and ("a", "bc") apart.
        h.update(b"\x00")
    return h.digest()


def image_digest(image: np.ndarray | None) -> bytes:
    """Digest of an image's shape and pixels (empty for no image)."""
    if image is None:
        return b""
    arr = np.ascontiguousarray(image)
    return digest(list(arr.shape), str(arr.dtype), arr.tobytes())


def palette_key(palette: Sequence[RGB] | None) -> list[list[int]] | None:
    """A palette in a JSON-able, canonical form."""
    return None if palette is None else [[int(c) for c in colour] for colour in palette]


def stream(key: bytes, label: str) -> np.random.Generator:
    """An independent random stream for one stage (``label``) of the drawing identified by ``key``."""
    return np.random.Generator(np.random.PCG64(int.from_bytes(digest(key, label)[:16], "little")))
