"""Bytes to arrays and back, with the sandbox's size limits enforced before pixels are decoded.

Limits (anchored on public services: Clipdrop accepts up to 16-25 MP and 30 MB, Stability about
9.4 MP and 10 MiB):

- ``MAX_UPLOAD_BYTES`` = 30 MiB per uploaded file (image or mask); larger is 413 ``payload_too_large``.
- ``MAX_UPLOAD_PIXELS`` = 25 MP per uploaded image or mask, read from the header before any pixel
  is decoded; larger is 413 ``image_too_large``. Pillow's own bomb guard (about 179 MP) answers the
  same way.
- ``MAX_UPLOAD_SIDE`` = 16384 px a side per upload, also read from the header: a 25,000,000x1
  strip is within the pixel budget but no engine can resize it; larger is 413 ``image_too_large``.
- ``MAX_OUTPUT_SIDE`` = 8192 px a side for anything an edit produces (an 8x enhance of 1024x1024 is
  the largest regular output); larger is 413 ``image_too_large``.

Accepted inputs are PNG, JPEG and WebP (first frame of an animation); anything else is 415
``unsupported_media_type``; a known format whose data is broken is 400 ``invalid_image``.
"""

from __future__ import annotations

import io
import warnings

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from imagekit.sandbox.interface.errors import SandboxError

MAX_UPLOAD_BYTES = 30 * 1024 * 1024
MAX_UPLOAD_PIXELS = 25_000_000
MAX_UPLOAD_SIDE = 16384
MAX_OUTPUT_SIDE = 8192

INPUT_FORMATS = frozenset({"PNG", "JPEG", "WEBP"})
OUTPUT_TYPES = ("png", "jpeg", "webp")
# zlib level 1 with the SUB filter: about as small as level 6 for photographic content and many
# times faster at 4096² (the adaptive filter choice alone costs a third of the time).
_PNG_LEVEL = 1

__all__ = [
    "MAX_OUTPUT_SIDE",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_PIXELS",
    "OUTPUT_TYPES",
    "check_output_size",
    "decode_image",
    "decode_mask",
    "encode_image",
]


def check_output_size(width: int, height: int) -> None:
    """Refuse an edit whose result would exceed ``MAX_OUTPUT_SIDE`` on either side."""
    if width > MAX_OUTPUT_SIDE or height > MAX_OUTPUT_SIDE:
        raise SandboxError("image_too_large", f"result would be {width}x{height}; at most {MAX_OUTPUT_SIDE} px a side")


def _looks_accepted(data: bytes) -> bool:
    """The file starts like a PNG, JPEG or WebP, so a failure to open it means broken data."""
    return data.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def _open(data: bytes, max_bytes: int, max_pixels: int) -> Image.Image:
    """Open lazily and check format and header size; no pixel has been decoded on return."""
    if len(data) > max_bytes:
        raise SandboxError("payload_too_large", f"{len(data)} bytes; at most {max_bytes}")
    try:
        with warnings.catch_warnings():
            # Our own pixel limit below is stricter than Pillow's warning threshold.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise SandboxError("image_too_large", str(exc)) from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        if _looks_accepted(data):
            raise SandboxError("invalid_image", "the image data is corrupt or truncated") from exc
        raise SandboxError("unsupported_media_type", "not a PNG, JPEG or WebP image") from exc
    if img.format not in INPUT_FORMATS:
        raise SandboxError("unsupported_media_type", f"{img.format} is not accepted; use PNG, JPEG or WebP")
    width, height = img.size
    if width * height > max_pixels:
        raise SandboxError("image_too_large", f"{width}x{height} exceeds {max_pixels} pixels")
    if max(width, height) > MAX_UPLOAD_SIDE:
        raise SandboxError("image_too_large", f"{width}x{height}: at most {MAX_UPLOAD_SIDE} px a side")
    return img


def _load(img: Image.Image) -> Image.Image:
    """Decode pixels and apply EXIF orientation; broken data is 400 ``invalid_image``."""
    try:
        img.load()
        return ImageOps.exif_transpose(img)
    except (OSError, ValueError, SyntaxError) as exc:
        raise SandboxError("invalid_image", "the image data is corrupt or truncated") from exc


def _to_rgba(img: Image.Image) -> np.ndarray:
    """Any Pillow mode as uint8 RGBA; 16/32-bit greyscale is scaled, not clipped."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I"):
        grey = np.asarray(img, dtype=np.int64)
        top = 65535 if img.mode.startswith("I;16") or grey.max(initial=0) > 255 else 255
        img = Image.fromarray((grey * 255 // top).clip(0, 255).astype(np.uint8))
    return np.asarray(img.convert("RGBA"))


def _flatten(rgba: np.ndarray) -> np.ndarray:
    """Composite RGBA onto white, as a viewer without transparency would show it."""
    alpha = rgba[..., 3:4].astype(np.uint16)
    rgb = rgba[..., :3].astype(np.uint16)
    return ((rgb * alpha + 255 * (255 - alpha) + 127) // 255).astype(np.uint8)


def decode_image(
    data: bytes, *, max_bytes: int = MAX_UPLOAD_BYTES, max_pixels: int = MAX_UPLOAD_PIXELS
) -> np.ndarray:
    """Decode an uploaded PNG/JPEG/WebP to uint8 RGB (H, W, 3), upright, alpha flattened onto white."""
    img = _load(_open(data, max_bytes, max_pixels))
    if img.mode == "RGB":
        return np.array(img)
    return _flatten(_to_rgba(img))


def _mask_values(img: Image.Image) -> np.ndarray:
    """Per-pixel mask strength 0..255: luminance, or alpha where the colour carries no information.

    A painter exporting strokes of one colour on transparency marks by alpha alone; a black and white
    mask with transparency marks by luminance composited over black (transparent = unmarked).
    """
    has_alpha = "A" in img.getbands() or "transparency" in img.info
    if not has_alpha:
        return np.asarray(img.convert("L"))
    rgba = _to_rgba(img)
    alpha = rgba[..., 3]
    if alpha.min() == 255:
        return np.asarray(img.convert("L"))
    luma = cv2.cvtColor(np.ascontiguousarray(rgba[..., :3]), cv2.COLOR_RGB2GRAY)
    visible = luma[alpha >= 128]
    if visible.size == 0 or int(visible.max()) - int(visible.min()) <= 16:
        return alpha.copy()
    return ((luma.astype(np.uint16) * alpha + 127) // 255).astype(np.uint8)


def decode_mask(
    data: bytes,
    size: tuple[int, int],
    *,
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_pixels: int = MAX_UPLOAD_PIXELS,
) -> np.ndarray:
    """Decode a mask file (white marks the area) to a bool (h, w) array for an image of ``size`` (w, h).

    The mask must have the image's size (400 ``mask_size_mismatch`` otherwise: stretching it would
    mark pixels the user never painted); it is thresholded at 128. An all-black mask is 400 ``empty_mask``.
    """
    width, height = size
    values = _mask_values(_load(_open(data, max_bytes, max_pixels)))
    if values.shape != (height, width):
        raise SandboxError("mask_size_mismatch",
                           f"The mask is {values.shape[1]}x{values.shape[0]} but the image is {width}x{height}; "
                           "send a mask of the image's size.")
    mask = values >= 128
    if not mask.any():
        raise SandboxError("empty_mask", "the mask marks no pixel (white marks the area)")
    return mask


def encode_image(array: np.ndarray, type: str, quality: int = 90) -> bytes:
    """Encode uint8 RGB/RGBA (or greyscale) as ``png``, ``jpeg`` or ``webp``; jpeg flattens alpha onto white."""
    kind = "jpeg" if type == "jpg" else type
    if kind not in OUTPUT_TYPES:
        raise SandboxError("invalid_type", f"type must be one of {', '.join(OUTPUT_TYPES)}")
    if not 1 <= quality <= 100:
        raise SandboxError("invalid_quality", "quality must be 1..100")
    if array.ndim == 3 and array.shape[2] == 4 and kind == "jpeg":
        array = _flatten(array)
    if array.ndim == 3:
        code = cv2.COLOR_RGBA2BGRA if array.shape[2] == 4 else cv2.COLOR_RGB2BGR
        array = cv2.cvtColor(array, code)
    ext, params = {
        "png": (".png", [cv2.IMWRITE_PNG_COMPRESSION, _PNG_LEVEL, cv2.IMWRITE_PNG_FILTER, cv2.IMWRITE_PNG_FILTER_SUB]),
        "jpeg": (".jpg", [cv2.IMWRITE_JPEG_QUALITY, quality]),
        "webp": (".webp", [cv2.IMWRITE_WEBP_QUALITY, quality]),
    }[kind]
    ok, buf = cv2.imencode(ext, array, params)
    if not ok:
        raise RuntimeError(f"OpenCV could not encode {kind}")
    return buf.tobytes()
