"""Reading provenance back from a file, with the readers of each format: Pillow for PNG, JPEG and
WebP (text chunks, XMP), an XML parser for SVG."""

from __future__ import annotations

import os
from typing import IO
from xml.etree import ElementTree

from .embed import kind_of
from .record import Provenance
from .xmp import fields_in

__all__ = ["read_provenance", "fields_of"]


def read_provenance(location: str | os.PathLike[str]) -> Provenance:
    """How the image in a file the toolkit wrote was made: a local path or an fsspec URL.

    Raises ValueError when the file holds no record (it was not written by imagekit).
    """
    from ..storage import opened

    with opened(location) as source:
        found = fields_of(source)
    if not found:
        raise ValueError(f"{os.fspath(location)} holds no imagekit provenance")
    return Provenance.from_text_fields(found)


def fields_of(source: IO[bytes]) -> dict[str, str]:
    """The record's text fields in an image file (empty when there are none)."""
    head = source.read(512)
    source.seek(0)
    kind = kind_of(head)
    if kind == "svg":
        return fields_in(ElementTree.parse(source).getroot())
    if kind is None:
        return {}
    from PIL import Image

    names = set(Provenance.__dataclass_fields__)
    with Image.open(source) as picture:  # reads the header chunks, not the pixels
        info = picture.info
    if kind == "png":
        return {str(key): str(value) for key, value in info.items() if key in names}
    xmp = info.get("xmp")
    return fields_in(ElementTree.fromstring(xmp)) if xmp else {}
