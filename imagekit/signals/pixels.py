"""The signals themselves: pure functions on pixels (NumPy arrays), nothing read or sent.

A grey image here is a 2-D ``uint8`` array; ``grey`` makes one of any PIL image or array. Every
function needs only NumPy and OpenCV, both shipping all they use (no weights, no downloads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

    Array = npt.NDArray[Any]

__all__ = ["WORKING_SIZE", "DUPLICATE_BITS", "DUPLICATE_COLOURS", "LEAK_TOLERANCE", "decode", "rgb", "grey", "colours",
           "colour_distance", "phash", "hamming", "sharpness", "noise",
           "entropy", "NOISE_REGION", "mask_values", "edge_margin", "leak"]

WORKING_SIZE = 512
"""Sharpness is measured with the longer side scaled to this many pixels, so images of any size compare."""
DUPLICATE_BITS = 10
"""Hashes at most this many bits apart (of 64) may be near-duplicates: a resized and recompressed
copy stays within 2 bits on the sandbox's 512 px pictures, one cropped by 1 % a side within 8 (by
2 %: within 10, but see below); different pictures of one style came as close as 8 (which the colour
check below then tells apart)."""
DUPLICATE_COLOURS = 3.5
"""...and their colour layouts (``colours``) at most this far apart: 0.5 at most for resized and
recompressed copies, 3.1 for those cropped by 1 % a side (by 2 %: up to 5.9, so such a crop is
found only most of the time), 4.3 at least for different pictures whose hashes were within 14 bits
(84 of the sandbox's pictures, both faces)."""
DUPLICATE_SHAPE = 0.1
"""...and their shapes (width over height) at most this far apart, as a logarithm (about 10 %): a
grid's 1:1 and 16:9 pictures of one prompt and seed share their layout and came 8 bits apart, but
the person asked for both; a copy cropped by 2 % a side, or on one side only, keeps its shape."""
LEAK_TOLERANCE = 8
"""A pixel outside the mask counts as changed when its brightness (smoothed by a pixel) moved by more
than this (of 255): above what JPEG at quality 60 and resampling move, below a repaint or a change of light (a change of hue alone is not seen)."""


def decode(data: bytes) -> Array | None:
    """An image file's bytes as an RGB, RGBA or grey ``uint8`` array (OpenCV decodes PNG and JPEG a
    quarter to a third faster than Pillow), or None when OpenCV cannot read them."""
    import cv2
    import numpy as np

    array = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if array is None or array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in (3, 4)):
        return None
    if array.dtype == np.uint16:
        array = np.right_shift(array, 8).astype(np.uint8)
    elif array.dtype != np.uint8:
        return None
    if array.ndim == 3:
        return cv2.cvtColor(array, cv2.COLOR_BGR2RGB if array.shape[2] == 3 else cv2.COLOR_BGRA2RGBA)
    return array


def rgb(pixels: Any) -> Array:
    """``pixels`` (a PIL image, or an RGB, RGBA or grey array) as an RGB (or grey) ``uint8`` array;
    transparent areas read as they are drawn over white."""
    import numpy as np

    return np.asarray(_rgb(pixels))


def grey(pixels: Any) -> Array:
    """``pixels`` (as ``rgb`` takes them) as a grey ``uint8`` array."""
    import cv2

    array = rgb(pixels)
    return array if array.ndim == 2 else cv2.cvtColor(array, cv2.COLOR_RGB2GRAY)


def colours(image: Array) -> bytes:
    """An RGB (or grey) image's colour layout: its 8x8 reduction in CIELAB, 192 bytes."""
    import cv2

    colour = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2RGB)
    small = cv2.resize(colour, (8, 8), interpolation=cv2.INTER_AREA)
    return bytes(cv2.cvtColor(small, cv2.COLOR_RGB2LAB).tobytes())


def colour_distance(a: bytes, b: bytes) -> float:
    """How far apart two colour layouts are: the mean difference of their values (of 255)."""
    import numpy as np

    return float(np.abs(np.frombuffer(a, np.uint8).astype(np.int16) - np.frombuffer(b, np.uint8)).mean())


def _rgb(pixels: Any) -> Any:
    """A PIL image or array as an RGB (or grey) ``uint8`` array, transparency over white."""
    import numpy as np

    if hasattr(pixels, "mode"):  # a PIL image
        if pixels.mode in ("RGBA", "LA", "PA") or (pixels.mode == "P" and "transparency" in pixels.info):
            from PIL import Image

            pixels = pixels.convert("RGBA")
            white = Image.new("RGBA", pixels.size, (255, 255, 255, 255))
            return np.asarray(Image.alpha_composite(white, pixels).convert("RGB"))
        return np.asarray(pixels if pixels.mode in ("RGB", "L") else pixels.convert("RGB"))
    array = np.asarray(pixels)
    if array.dtype == bool:
        array = array.astype(np.uint8) * 255
    elif array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    if array.ndim == 3 and array.shape[2] == 4:
        alpha = array[..., 3:4].astype(np.float32) / 255
        array = (array[..., :3] * alpha + 255 * (1 - alpha)).round().astype(np.uint8)
    elif array.ndim == 3 and array.shape[2] == 1:
        array = array[..., 0]
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] != 3) or min(array.shape[:2]) < 1:
        raise ValueError(f"an image is a grey, RGB or RGBA array, not one of shape {array.shape}")
    return array


def phash(image: Array) -> int:
    """The 64-bit perceptual hash of a grey image (the DCT hash: the 8x8 lowest frequencies of its
    32x32 reduction, each bit whether one is above their median)."""
    import cv2
    import numpy as np

    small = cv2.resize(image, (32, 32), interpolation=cv2.INTER_AREA).astype(np.float32)
    low = cv2.dct(small)[:8, :8].ravel()
    bits = low > np.median(low)
    return int(np.packbits(bits).view(">u8")[0])


def hamming(a: int, b: int) -> int:
    """How many bits two hashes differ by."""
    return (a ^ b).bit_count()


def sharpness(image: Array) -> float:
    """The variance of the Laplacian of a grey image, its longer side scaled to ``WORKING_SIZE``
    (higher is sharper; a blurred copy scores lower)."""
    import cv2

    height, width = image.shape[:2]
    scale = WORKING_SIZE / max(height, width)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    working = cv2.resize(image, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    return float(cv2.Laplacian(working, cv2.CV_32F).var())


_IMMERKAER = ((1, -2, 1), (-2, 4, -2), (1, -2, 1))


NOISE_REGION = 512
"""Noise is estimated over the central square of at most this many pixels a side: the noise of a
whole picture, at a fraction of the cost for a large one."""


def noise(image: Array) -> float:
    """The sigma of the image's Gaussian noise, in levels of 255: of each channel of an RGB image,
    averaged (noise added to each channel is weaker in their grey mix). Immerkaer's fast estimate
    (1996), over the image less its 10 % most edged pixels, which it would read as noise."""
    import math

    import cv2
    import numpy as np

    height, width = image.shape[:2]
    if min(height, width) < 3:
        return 0.0
    top, left = max(0, (height - NOISE_REGION) // 2), max(0, (width - NOISE_REGION) // 2)
    region = image[top:top + NOISE_REGION, left:left + NOISE_REGION]
    channels = [region] if region.ndim == 2 else [region[..., c] for c in range(region.shape[2])]
    brightness = (region if region.ndim == 2 else cv2.cvtColor(np.ascontiguousarray(region), cv2.COLOR_RGB2GRAY))
    edges = cv2.add(cv2.convertScaleAbs(cv2.Sobel(brightness, cv2.CV_16S, 1, 0)),
                    cv2.convertScaleAbs(cv2.Sobel(brightness, cv2.CV_16S, 0, 1)))[1:-1, 1:-1]
    counts = np.cumsum(np.bincount(edges.ravel(), minlength=256))
    flat = edges <= int(np.searchsorted(counts, 0.9 * counts[-1]))  # the 10 % most edged pixels left out
    kernel = np.array(_IMMERKAER, np.float32)
    sigmas = [float(np.abs(cv2.filter2D(np.ascontiguousarray(c), cv2.CV_32F, kernel))[1:-1, 1:-1][flat].mean())
              for c in channels]
    return math.sqrt(math.pi / 2) * sum(sigmas) / len(sigmas) / 6


def entropy(image: Array) -> float:
    """The Shannon entropy of a grey image's histogram, in bits (0 for one flat colour, 8 at most)."""
    import numpy as np

    counts = np.bincount(image.ravel(), minlength=256).astype(np.float64)
    shares = counts[counts > 0] / counts.sum()
    return float(-(shares * np.log2(shares)).sum()) + 0.0


def mask_values(mask: Any) -> Array:
    """A mask's strength per pixel (0 to 255), read as the interface reads one: its brightness; where
    it has transparency, transparent is unmarked (its alpha alone when its colour is one, else its
    brightness over black)."""
    import cv2
    import numpy as np

    if hasattr(mask, "mode"):  # a PIL image
        mask = np.asarray(mask.convert("RGBA") if "A" in mask.getbands() or "transparency" in mask.info
                          else mask.convert("L"))
    array = np.asarray(mask)
    if array.dtype == bool:
        return array.astype(np.uint8) * 255
    if array.ndim != 3 or array.shape[2] != 4 or array[..., 3].min() == 255:
        return grey(array[..., :3] if array.ndim == 3 and array.shape[2] == 4 else array)
    alpha = array[..., 3]
    luma = cv2.cvtColor(np.ascontiguousarray(array[..., :3]), cv2.COLOR_RGB2GRAY)
    visible = luma[alpha >= 128]
    if visible.size == 0 or int(visible.max()) - int(visible.min()) <= 16:
        return np.ascontiguousarray(alpha)
    return (luma.astype(np.uint16) * alpha // 255).astype(np.uint8)


def edge_margin(shape: tuple[int, ...]) -> int:
    """Pixels around a mask an edit may blend into (its longer side / 128, at least 4): they count as inside."""
    return max(4, round(max(shape[:2]) / 128))


def leak(before: Any, after: Any, mask: Any, tolerance: int = LEAK_TOLERANCE, margin: int | None = None) -> float:
    """The share of the pixels outside ``mask`` (white: the edited area) grown by ``margin`` pixels
    (default ``edge_margin``) whose brightness changed from ``before`` to ``after`` by more than
    ``tolerance``, both smoothed by a pixel first so that recompression's speckle is not a change.
    ``after`` (larger, say) and ``mask`` are scaled to ``before``'s size first; 0 when the grown
    mask covers everything."""
    import cv2
    import numpy as np

    first, second, where = grey(before), grey(after), mask_values(mask)
    height, width = first.shape
    if second.shape != (height, width):
        second = cv2.resize(second, (width, height), interpolation=cv2.INTER_AREA)
    if where.shape != (height, width):
        where = cv2.resize(where, (width, height), interpolation=cv2.INTER_NEAREST)
    inside = (where >= 128).astype(np.uint8)
    grow = edge_margin((height, width)) if margin is None else max(0, int(margin))
    if grow:
        inside = np.asarray(cv2.dilate(inside, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1, 2 * grow + 1))), np.uint8)
    smooth_first, smooth_second = (cv2.GaussianBlur(x, (0, 0), 1.0).astype(np.int16) for x in (first, second))
    outside = inside == 0
    total = int(outside.sum())
    return 0.0 if not total else float(((np.abs(smooth_first - smooth_second) > tolerance) & outside).sum() / total)
