"""Writing provenance into an image file as it is copied: PNG text chunks, XMP in JPEG (an APP1
segment) and WebP (an ``XMP `` chunk), a ``<metadata>`` element in SVG.

Bytes are spliced, never decoded: the pixels stay exactly as the service sent them, and a file is
copied a chunk at a time. A record written earlier is replaced, not repeated. Other formats are
copied unchanged.
"""

from __future__ import annotations

import logging
import re
import shutil
import struct
import zlib
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Protocol

from .xmp import packet, rdf

if TYPE_CHECKING:
    from ..storage import Store

__all__ = ["embed", "write", "kind_of"]

log = logging.getLogger("imagekit")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
XMP_APP1 = b"http://ns.adobe.com/xap/1.0/\x00"
SVG_METADATA_ID = "imagekit-provenance"
_TEXT_CHUNKS = (b"tEXt", b"iTXt", b"zTXt")
_SVG_START = re.compile(rb"<svg\b(?:[^>\"']|\"[^\"]*\"|'[^']*')*?(/?)>")
_SVG_OURS = re.compile(rf'\s*<metadata id="{SVG_METADATA_ID}">.*?</metadata>'.encode(), re.S)
Fields = Mapping[str, str]


class Sink(Protocol):
    """Where a file is copied to: anything with ``write``."""

    def write(self, data: bytes, /) -> object: ...


def kind_of(head: bytes) -> str | None:
    """``png``, ``jpeg``, ``webp`` or ``svg`` from a file's first bytes (a few hundred suffice)."""
    if head.startswith(PNG_SIGNATURE):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if b"<svg" in head:
        return "svg"
    return None


def embed(source: IO[bytes], sink: Sink, values: Fields) -> str | None:
    """Copy the image in ``source`` (seekable, read from its start) to ``sink`` with ``values``
    written inside; return its kind. A file of no kind that holds them, or one its kind's rules do not
    parse, is copied as it is (the image is never lost for its record): then None."""
    source.seek(0)
    kind = kind_of(source.read(512))
    source.seek(0)
    write = _WRITERS.get(kind or "")
    if write is not None and values:
        try:  # a dry run first: a sink that is uploading cannot take back what it was given
            write(source, _Nowhere(), values)
        except (ValueError, struct.error) as exc:
            log.warning("a %s file that cannot be parsed (%s): copied without its provenance", kind, exc)
            write = None
        source.seek(0)
    if write is None or not values:
        shutil.copyfileobj(source, sink)
        return None
    write(source, sink, values)
    return kind


class _Nowhere:
    """A sink that keeps nothing."""

    def write(self, data: bytes) -> int:
        return len(data)


def _exactly(source: IO[bytes], size: int) -> bytes:
    data = source.read(size)
    if len(data) != size:
        raise ValueError("the image file ends early")
    return data


def _copy(source: IO[bytes], sink: Sink, size: int, chunk: int = 1 << 20) -> None:
    while size > 0:
        data = _exactly(source, min(chunk, size))
        sink.write(data)
        size -= len(data)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(source: IO[bytes], sink: Sink, values: Fields) -> None:
    """Each field an iTXt chunk (UTF-8) right after IHDR, where readers find it without the pixels."""
    ours = {name.encode("latin-1") for name in values}
    sink.write(_exactly(source, len(PNG_SIGNATURE)))
    while header := source.read(8):
        size, kind = struct.unpack(">I4s", header if len(header) == 8 else header + _exactly(source, 8 - len(header)))
        if kind in _TEXT_CHUNKS:
            body = _exactly(source, size + 4)
            if body.split(b"\0", 1)[0] not in ours:  # an earlier record of ours is replaced
                sink.write(header + body)
            continue
        sink.write(header)
        _copy(source, sink, size + 4)
        if kind == b"IHDR":
            for name, text in values.items():
                sink.write(_png_chunk(b"iTXt", name.encode("latin-1") + b"\0\0\0\0\0" + text.encode()))


def _jpeg(source: IO[bytes], sink: Sink, values: Fields) -> None:
    """An XMP APP1 segment after SOI and the segments that must lead (JFIF's APP0, Exif's APP1); an
    earlier XMP segment is dropped."""
    payload = XMP_APP1 + packet(values)
    if len(payload) + 2 > 0xFFFF:
        raise ValueError("provenance too large for a JPEG XMP segment")
    ours = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    sink.write(_exactly(source, 2))  # SOI
    while True:
        marker = _exactly(source, 2)
        if marker[0] != 0xFF:
            raise ValueError("not a JPEG segment")
        if marker == b"\xff\xda" or 0xD0 <= marker[1] <= 0xD9:  # start of scan, or a marker without a length
            sink.write(ours + marker)
            ours = b""
            if marker == b"\xff\xda":
                shutil.copyfileobj(source, sink)
                return
            continue
        length = _exactly(source, 2)
        body = _exactly(source, struct.unpack(">H", length)[0] - 2)
        leads = marker == b"\xff\xe0" or (marker == b"\xff\xe1" and body.startswith(b"Exif\0\0"))
        if not leads:
            sink.write(ours)
            ours = b""
        if not (marker == b"\xff\xe1" and body.startswith(XMP_APP1)):
            sink.write(marker + length + body)


def _webp(source: IO[bytes], sink: Sink, values: Fields) -> None:
    """An ``XMP `` chunk at the end, flagged in VP8X (made from the bitstream's size if the file is
    a simple one); the RIFF size is set to match."""
    riff_size = struct.unpack("<I", _exactly(source, 12)[4:8])[0]
    chunks, position = [], 12
    while position + 8 <= riff_size + 8:
        source.seek(position)
        kind, size = struct.unpack("<4sI", _exactly(source, 8))
        chunks.append((kind, position, size))
        position += 8 + size + (size & 1)
    xmp = packet(values)
    extended = _vp8x(source, chunks[0])
    kept = [chunk for chunk in chunks if chunk[0] not in (b"VP8X", b"XMP ")]
    total = 4 + len(extended) + sum(8 + size + (size & 1) for _, _, size in kept) + 8 + len(xmp) + (len(xmp) & 1)
    sink.write(b"RIFF" + struct.pack("<I", total) + b"WEBP" + extended)
    for _, position, size in kept:
        source.seek(position)
        _copy(source, sink, 8 + size + (size & 1))
    sink.write(b"XMP " + struct.pack("<I", len(xmp)) + xmp + b"\0" * (len(xmp) & 1))


def _vp8x(source: IO[bytes], first: tuple[bytes, int, int]) -> bytes:
    """The VP8X chunk with the XMP flag set: the file's own, or one made for a simple file."""
    kind, position, size = first
    source.seek(position + 8)
    data = _exactly(source, min(size, 10))
    if kind == b"VP8X":
        flags = data[0] | 0x04
        return b"VP8X" + struct.pack("<I", 10) + bytes([flags]) + data[1:10]
    if kind == b"VP8 ":  # lossy: 14-bit width and height after the start code
        width, height, alpha = (struct.unpack("<H", data[6:8])[0] & 0x3FFF, struct.unpack("<H", data[8:10])[0] & 0x3FFF,
                                False)
    elif kind == b"VP8L":  # lossless: width-1 and height-1 in 14 bits each, then the alpha hint
        bits = int.from_bytes(data[1:5], "little")
        width, height, alpha = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, bool(bits >> 28 & 1)
    else:
        raise ValueError(f"a WebP file starting with a {kind!r} chunk")
    flags = 0x04 | (0x10 if alpha else 0)
    return (b"VP8X" + struct.pack("<I", 10) + bytes([flags, 0, 0, 0]) + (width - 1).to_bytes(3, "little")
            + (height - 1).to_bytes(3, "little"))


def _svg(source: IO[bytes], sink: Sink, values: Fields) -> None:
    """A ``<metadata>`` element holding the RDF record, as the ``<svg>`` element's first child."""
    text = _SVG_OURS.sub(b"", source.read())
    start = _SVG_START.search(text)
    if start is None:
        raise ValueError("no <svg> element")
    element = f'<metadata id="{SVG_METADATA_ID}">{rdf(values)}</metadata>'.encode()
    if start.group(1):  # <svg .../>: it gets a body
        head = text[:start.start(1)] + b">" + element + b"</svg>"
    else:
        head = text[:start.end()] + element
    sink.write(head)
    sink.write(text[start.end():])


_WRITERS: dict[str, Callable[[IO[bytes], Sink, Fields], None]] = {
    "png": _png, "jpeg": _jpeg, "webp": _webp, "svg": _svg}


def write(source: IO[bytes], store: Store, name: str, values: Fields) -> str:
    """Copy the image in ``source`` into ``store`` as ``name`` with ``values`` inside (whole or not
    at all, see ``Store.writer``); return where it went."""
    with store.writer(name) as sink:
        embed(source, sink, values)
    return store.url(name)
