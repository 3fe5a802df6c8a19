"""Turning what a user holds (PIL image, NumPy array, path, bytes, handle, id) into what the wire wants.

Pillow and NumPy are imported only when a value needs them, to keep ``import imagekit`` light.
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from .errors import ValidationError

if TYPE_CHECKING:
    import numpy.typing as npt
    from PIL.Image import Image as PILImage


@runtime_checkable
class HasId(Protocol):
    """An image handle (Image, AsyncImage): anything with the image's ``id``."""

    id: int


Pixels: TypeAlias = "PILImage | npt.NDArray[Any]"
"""Local pixels: a PIL image or a NumPy array (bool or uint8)."""
MaskSource: TypeAlias = "Pixels | str | os.PathLike[str] | bytes | bytearray"
"""A mask: pixels, a file path, or PNG/JPEG/WebP bytes."""
ImageSource: TypeAlias = "HasId | int | MaskSource"
"""A reference image: a handle or id, local pixels, a path, bytes, or a URL / ``data:`` URL string."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_MIME = {
    b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"RIFF": "image/webp", b"<svg": "image/svg+xml",
}
_TYPES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp", ".svg": "svg"}


def binary_path(image_id: int) -> str:
    """The service path of an image's binary, the form create and imageToPrompt accept."""
    return f"/api/images/{int(image_id)}/binary"


def type_for_path(path: str | os.PathLike[str]) -> str:
    """Image type (``png``, ``jpeg``, ``webp``, ``svg``) from a file name; png when unknown."""
    return _TYPES.get(Path(path).suffix.lower(), "png")


def save_type(path: str | os.PathLike[str], type: str | None = None) -> str:
    """The type an image saved as ``path`` is written in: ``type``, else its suffix's (png without
    one). A suffix that names another format (``x.gif``: the service serves none) or another type than
    ``type`` is refused in one line (ValidationError): the file would hold other bytes than its name says."""
    suffix = Path(path).suffix.lower()
    named = _TYPES.get(suffix)
    if suffix and named is None:
        raise ValidationError(f"{path}: a {suffix} file cannot be written: images are saved as "
                              f"{', '.join(_TYPES)} (the types the service serves); name it one of those",
                              field="path", value=str(path))
    if type is not None and named is not None and named != type:
        raise ValidationError(f"{path}: named {suffix} but type={type!r}: name it for the type, or leave type out",
                              field="type", value=type)
    return type or named or "png"


def image_source(value: ImageSource) -> str:
    """A reference-image string: a binary path, a URL, or a ``data:`` URL built from local pixels.

    Accepts an image handle or id, a local file path, PNG/JPEG/WebP bytes, a PIL image, a NumPy
    array, or any other string (``/api/images/<id>/binary``, ``data:...``), passed through as is.
    """
    if isinstance(value, HasId):
        return binary_path(value.id)
    if isinstance(value, bool):
        raise TypeError("a reference image cannot be a bool")
    if isinstance(value, int):
        return binary_path(value)
    if isinstance(value, str) and not os.path.isfile(value):
        return value  # a path or URL for the service to judge
    if isinstance(value, (str, os.PathLike)):
        data = Path(value).read_bytes()
        if _sniff(data) == _UNKNOWN:  # said of the user's file, not of a data: URL they never wrote
            from .errors import ValidationError

            raise ValidationError(f"{value} is not a PNG, JPEG or WebP image, which a reference image must be",
                                  field="image", value=str(value))
    elif isinstance(value, (bytes, bytearray)):
        data = bytes(value)
    else:
        data = to_png(value)
    return f"data:{_sniff(data)};base64,{base64.b64encode(data).decode('ascii')}"


_UNKNOWN = "application/octet-stream"


def _sniff(data: bytes) -> str:
    for magic, mime in _MIME.items():
        if data.startswith(magic):
            return mime
    return _UNKNOWN


def mask_png(mask: MaskSource) -> bytes:
    """A mask as PNG bytes, from a PIL image, a NumPy array (bool or uint8), a path or bytes.

    A bool array becomes 0/255; anything not already a PNG is re-encoded as one.
    """
    if isinstance(mask, (str, os.PathLike)):
        mask = Path(mask).read_bytes()
    if isinstance(mask, (bytes, bytearray)):
        if bytes(mask[:8]) == PNG_SIGNATURE:
            return bytes(mask)
        from PIL import Image as PILImage

        return to_png(PILImage.open(io.BytesIO(mask)))
    return to_png(mask)


def parse_resolution(resolution: str | None) -> tuple[int, int] | None:
    """(width, height) from a ``WxH`` resolution, None when absent or unreadable."""
    width, _, height = (resolution or "").partition("x")
    return (int(width), int(height)) if width.isdigit() and height.isdigit() else None


def size_mismatch(mask_size: tuple[int, int], image_size: tuple[int, int]) -> str:
    """Why a mask does not fit an image, naming both sizes (the client and the painter say it alike)."""
    return f"the mask is {mask_size[0]}x{mask_size[1]} but the image is {image_size[0]}x{image_size[1]}"


def fitted_mask(mask: MaskSource, size: tuple[int, int] | None, resize: bool = False) -> bytes:
    """The mask as PNG bytes, checked against the image's ``size`` (w, h) before anything is sent.

    A mask of another size raises ValueError naming both, unless ``resize`` asks to scale it
    (nearest neighbour, so painted and unpainted pixels stay apart). ``size`` None skips the check,
    and a file Pillow cannot read goes as it is, for the service to judge.
    """
    data = mask_png(mask)
    if size is None:
        return data
    from PIL import Image as PILImage, UnidentifiedImageError

    try:
        picture = PILImage.open(io.BytesIO(data))
    except (UnidentifiedImageError, OSError):
        return data
    if picture.size == size:
        return data
    if not resize:
        raise ValueError(f"{size_mismatch(picture.size, size)}; "
                         "paint the mask at the image's size, or pass resize=True to scale it")
    return to_png(picture.resize(size, PILImage.Resampling.NEAREST))


def to_png(picture: Pixels) -> bytes:
    """PNG bytes of a PIL image or a NumPy array."""
    from PIL import Image as PILImage

    if not isinstance(picture, PILImage.Image):
        import numpy as np

        array = np.asarray(picture)
        if array.dtype == bool:
            array = array.astype(np.uint8) * 255
        elif array.dtype != np.uint8:
            raise TypeError(f"expected a bool or uint8 array, got {array.dtype}")
        picture = PILImage.fromarray(array)
    out = io.BytesIO()
    picture.save(out, format="PNG")
    return out.getvalue()


def thumbnail_png(data: bytes, size: int = 256) -> bytes | None:
    """A small PNG of an image for notebook display, or None if Pillow cannot read it."""
    from PIL import Image as PILImage, UnidentifiedImageError

    try:
        picture: PILImage.Image = PILImage.open(io.BytesIO(data))
        picture.thumbnail((size, size))
        if picture.mode not in ("RGB", "RGBA", "L", "LA"):
            picture = picture.convert("RGBA")
        out = io.BytesIO()
        picture.save(out, format="PNG")
    except (UnidentifiedImageError, OSError, ValueError):
        return None
    return out.getvalue()
