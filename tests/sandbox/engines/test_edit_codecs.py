"""Decoding uploads and masks, encoding results, and the size limits that guard them."""

from __future__ import annotations

import io
import struct
import tracemalloc
import zlib

import cv2
import numpy as np
import pytest
from PIL import Image

from imagekit.sandbox.engines.edits import MAX_UPLOAD_PIXELS, decode_image, decode_mask, encode_image
from imagekit.sandbox.interface.errors import SandboxError


def saved(array: np.ndarray, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format=fmt, **options)
    return buffer.getvalue()


def picture(h: int = 48, w: int = 64) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    return np.dstack([xx * 255 // w, yy * 255 // h, np.full((h, w), 128)]).astype(np.uint8)


def square_mask(h: int = 48, w: int = 64) -> np.ndarray:
    mask = np.zeros((h, w), np.uint8)
    mask[12:36, 16:48] = 255
    return mask


def refused(call, status: int, name: str) -> None:
    with pytest.raises(SandboxError) as info:
        call()
    assert (info.value.status, info.value.name) == (status, name)


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` but which carries almost no data."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


# --- decode_image -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt, tolerance", [("PNG", 0), ("JPEG", 8), ("WEBP", 8)])
def test_decode_image_reads_the_accepted_formats(fmt, tolerance):
    image = picture()
    decoded = decode_image(saved(image, fmt, **({"quality": 95} if fmt != "PNG" else {})))
    assert decoded.shape == image.shape and decoded.dtype == np.uint8
    assert np.abs(decoded.astype(int) - image).mean() <= tolerance


def test_decode_image_applies_exif_orientation():
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    decoded = decode_image(saved(picture(48, 64), "JPEG", exif=exif.tobytes(), quality=95))
    assert decoded.shape == (64, 48, 3)


def test_decode_image_flattens_alpha_onto_white_and_scales_16_bit():
    rgba = np.dstack([picture(), np.zeros((48, 64), np.uint8)])
    rgba[:, :32, 3] = 255
    decoded = decode_image(saved(rgba, "PNG"))
    assert np.array_equal(decoded[:, :32], picture()[:, :32]) and (decoded[:, 32:] == 255).all()
    deep = Image.fromarray(np.full((8, 8), 40000, np.uint16))
    buffer = io.BytesIO()
    deep.save(buffer, format="PNG")
    assert abs(int(decode_image(buffer.getvalue())[0, 0, 0]) - 40000 * 255 // 65535) <= 1


def test_decode_image_refuses_other_formats_and_broken_data():
    refused(lambda: decode_image(b"hello, not an image"), 415, "unsupported_media_type")
    refused(lambda: decode_image(saved(picture(), "GIF")), 415, "unsupported_media_type")
    refused(lambda: decode_image(saved(picture(), "BMP")), 415, "unsupported_media_type")
    refused(lambda: decode_image(saved(picture(), "PNG")[:60]), 400, "invalid_image")


def test_decode_image_enforces_byte_and_pixel_limits():
    data = saved(picture(), "PNG")
    refused(lambda: decode_image(data, max_bytes=len(data) - 1), 413, "payload_too_large")
    refused(lambda: decode_image(data, max_pixels=48 * 64 - 1), 413, "image_too_large")
    assert decode_image(data, max_bytes=len(data), max_pixels=48 * 64).shape == (48, 64, 3)


@pytest.mark.parametrize("side", [50_000, 6_000])  # beyond Pillow's own guard, and only beyond ours
def test_decompression_bombs_are_refused_before_any_pixel_is_allocated(side):
    bomb = png_header_only(side, side)
    assert len(bomb) < 200 and side * side > MAX_UPLOAD_PIXELS
    tracemalloc.start()
    try:
        refused(lambda: decode_image(bomb), 413, "image_too_large")
        refused(lambda: decode_mask(bomb, (64, 64)), 413, "image_too_large")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000


# --- decode_mask --------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_decode_mask_reads_white_as_the_area(fmt):
    mask = decode_mask(saved(square_mask(), fmt), (64, 48))
    assert mask.dtype == bool and mask.shape == (48, 64)
    assert np.array_equal(mask, square_mask() >= 128)


def test_decode_mask_refuses_a_mask_of_another_size():
    """Never stretched: not when transposed, not even when proportional."""
    big = cv2.resize(square_mask(), (256, 192), interpolation=cv2.INTER_NEAREST)
    for wrong in (big, square_mask()[::4, ::4].copy(), square_mask().T.copy()):
        refused(lambda wrong=wrong: decode_mask(saved(wrong, "PNG"), (64, 48)), 400, "mask_size_mismatch")


def test_decode_mask_uses_alpha_when_the_colour_says_nothing():
    strokes = np.zeros((48, 64, 4), np.uint8)
    strokes[..., :3] = (255, 0, 0)  # red paint, as a mask painter exports it
    strokes[..., 3] = square_mask()
    assert np.array_equal(decode_mask(saved(strokes, "PNG"), (64, 48)), square_mask() >= 128)
    # Black and white with transparency: white and opaque marks; transparent never does.
    bw = np.dstack([np.full((48, 64, 3), 255, np.uint8), np.full((48, 64), 255, np.uint8)])
    bw[..., :3][square_mask() == 0] = 0
    bw[:, :24, 3] = 0
    expected = (square_mask() >= 128) & (np.arange(64) >= 24)[None, :]
    assert np.array_equal(decode_mask(saved(bw, "PNG"), (64, 48)), expected)
    assert np.array_equal(decode_mask(saved(bw, "WEBP", lossless=True), (64, 48)), expected)


def test_decode_mask_refusals():
    refused(lambda: decode_mask(saved(np.zeros((48, 64), np.uint8), "PNG"), (64, 48)), 400, "empty_mask")
    refused(lambda: decode_mask(b"%PDF-1.4 not a mask", (64, 48)), 415, "unsupported_media_type")
    refused(lambda: decode_mask(saved(square_mask(), "GIF"), (64, 48)), 415, "unsupported_media_type")
    data = saved(square_mask(), "PNG")
    refused(lambda: decode_mask(data, (64, 48), max_bytes=10), 413, "payload_too_large")


# --- encode_image -------------------------------------------------------------------------------


def test_encode_image_round_trips_and_keeps_alpha_where_the_format_can():
    image = picture()
    assert np.array_equal(decode_image(encode_image(image, "png")), image)
    for kind in ("jpeg", "jpg", "webp"):
        assert np.abs(decode_image(encode_image(image, kind, 95)).astype(int) - image).mean() < 6
    rgba = np.dstack([image, np.full((48, 64), 100, np.uint8)])
    for kind, mode in (("png", "RGBA"), ("webp", "RGBA"), ("jpeg", "RGB")):
        assert Image.open(io.BytesIO(encode_image(rgba, kind))).mode == mode
    with Image.open(io.BytesIO(encode_image(rgba, "png"))) as reopened:
        assert np.array_equal(np.asarray(reopened), rgba)


def test_encode_image_refuses_unknown_types_and_qualities():
    refused(lambda: encode_image(picture(), "gif"), 400, "invalid_type")
    refused(lambda: encode_image(picture(), "jpeg", 0), 400, "invalid_quality")
