"""``quality(images)``: the signals of many images as one DataFrame, each image read once.

What can be measured: an image handle (its pixels from the create answer when it carried them, else
read once, its notebook thumbnail made from the same bytes), a file, a PIL image or array, a list of
them, or anything with ``quality_items()`` (a batch, a chain's result). Measured signals are cached
per service and image id in this process, and in the hash store (``store``) when one is given.
"""

from __future__ import annotations

import io
import os
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import ValidationError
from ..extras import require
from ..media import HasId
from . import pixels
from .store import HashStore

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Item", "HasQualityItems", "quality", "edit_leak", "items_of", "handle_item", "measure", "load",
           "FRAME_COLUMNS"]

FRAME_COLUMNS = ("image_id", "path", "phash", "dup_of", "distance", "sharpness", "noise", "entropy", "width",
                 "height")
"""The columns of ``quality``'s frame, in order."""
_SHOWN = ("phash", "sharpness", "noise", "entropy", "width", "height")
_CACHE_SIZE = 10_000
_cache: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
"""Signals measured in this process, by (service, image id)."""


@dataclass(frozen=True)
class Item:
    """One image to measure: its id on the service (None for a local one), its file (if any), how to
    read it (bytes, a PIL image or an array) and the service it is on (for the cache)."""

    image_id: int | None
    path: str | None
    read: Callable[[], Any]
    service: str | None = None


@runtime_checkable
class HasQualityItems(Protocol):
    """What holds images to measure (a batch, a chain's result): ``quality_items()`` lists them."""

    def quality_items(self) -> list[Item]:
        """The images, each as an ``Item``."""
        ...


def handle_item(handle: Any, path: str | os.PathLike[str] | None = None) -> Item:
    """An image handle as an Item: its pixels read from ``path`` (a file it was saved to) when given,
    else from its create answer when it carried them, else from the service once (the bytes then
    also make its notebook thumbnail, which would otherwise read them again)."""
    from ..images import _decode
    from ..media import thumbnail_png

    def read() -> Any:
        if path is not None and Path(path).is_file():
            return Path(path).read_bytes()
        data = _decode(getattr(handle.info, "base64", None)) or handle._fetch_png()
        if getattr(handle, "_thumb", None) is None:
            handle._thumb = thumbnail_png(data)
        return data

    return Item(int(handle.id), None if path is None else str(path), read, handle.client.config.service)


def items_of(images: Any) -> list[Item]:
    """What ``quality`` accepts, as Items; anything else is one line (ValidationError)."""
    if isinstance(images, HasQualityItems):
        return images.quality_items()
    if isinstance(images, HasId):
        return [handle_item(images)]
    if isinstance(images, (str, os.PathLike)) and Path(images).is_dir():
        return [item for path in _pictures_in(Path(images)) for item in items_of(path)]
    if isinstance(images, (str, os.PathLike)):
        path = str(images)
        return [Item(None, path, lambda: _file_bytes(path))]
    if hasattr(images, "mode") and hasattr(images, "size") or hasattr(images, "__array_interface__"):
        return [Item(None, None, lambda: images)]  # a PIL image or an array
    if isinstance(images, Iterable) and not isinstance(images, (bytes, bytearray, dict)):
        return [item for each in images for item in items_of(each)]
    raise ValidationError(f"cannot measure a {type(images).__name__}: give an image handle, a batch, a chain's "
                          "result, a file path, a folder, a PIL image, or a list of them", field="images")


PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
"""The files of a folder that ``quality`` measures (case aside)."""


def _pictures_in(folder: Path) -> list[str]:
    """The picture files directly in ``folder``, by name (hidden ones left out); none is one line."""
    found = sorted(str(path) for path in folder.iterdir() if path.suffix.lower() in PICTURE_SUFFIXES
                   and not path.name.startswith(".") and path.is_file())
    if not found:
        raise ValidationError(f"{folder} holds no PNG, JPEG or WebP file to measure", field="images", value=str(folder))
    return found


def _file_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise ValidationError(f"{path}: no such image file", field="images", value=path) from None


def load(value: Any, what: str = "image") -> Any:
    """Pixels to measure: an array (or a PIL image) from bytes, a file or an image handle's, else
    ``value`` as it is (a PIL image or an array); what neither OpenCV nor Pillow can read is one line
    (ValidationError)."""
    from PIL import Image as PILImage, UnidentifiedImageError

    if isinstance(value, HasId):
        value = handle_item(value).read()
    elif isinstance(value, (str, os.PathLike)):
        value = _file_bytes(str(value))
    if isinstance(value, (bytes, bytearray)):
        decoded = pixels.decode(bytes(value))
        if decoded is not None:
            return decoded
        try:
            picture = PILImage.open(io.BytesIO(value))
            picture.load()
        except (UnidentifiedImageError, OSError, ValueError):
            raise ValidationError(f"the {what} is not a PNG, JPEG or WebP image Pillow can read", field=what) from None
        return picture
    return value


def measure(item: Item) -> dict[str, Any]:
    """One image's signals (``store.COLUMNS``), measured from its pixels."""
    try:
        colour = pixels.rgb(load(item.read()))
    except ValueError as exc:
        raise ValidationError(f"{item.path or _name(item)}: {exc}", field="images") from None
    grey = pixels.grey(colour)
    height, width = grey.shape[:2]
    return {"phash": f"{pixels.phash(grey):016x}", "colours": pixels.colours(colour), "sharpness": pixels.sharpness(grey),
            "noise": pixels.noise(colour), "entropy": pixels.entropy(grey), "width": int(width), "height": int(height)}


def _name(item: Item) -> str:
    return f"image {item.image_id}" if item.image_id is not None else "an image"


def _signals(items: list[Item], store: HashStore | None) -> list[dict[str, Any]]:
    """Each item's signals: from this process's cache, the store, else measured (then kept in both)."""
    kept = store.get(i.image_id for i in items if i.image_id is not None) if store is not None else {}
    found: list[dict[str, Any]] = []
    new: dict[int, dict[str, Any]] = {}
    for item in items:
        key = (item.service or "", item.image_id) if item.image_id is not None else None
        values = _cache.get(key) if key is not None else None
        if values is None and item.image_id is not None and item.image_id in kept:
            values = kept[item.image_id]
        if values is None:
            values = measure(item)
        if key is not None:
            _cache[key] = values
            _cache.move_to_end(key)
            if len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
            if item.image_id not in kept:
                new[key[1]] = values
        found.append(values)
    if store is not None:
        store.put(new)
    return found


def quality(images: Any, *, store: HashStore | None = None, limit: int = pixels.DUPLICATE_BITS) -> pd.DataFrame:
    """One row per image: ``image_id`` (None for a file or PIL image) and ``path`` (its file), ``phash``,
    ``dup_of`` (the first earlier image it nearly repeats: its id, else its path, else its row; empty when
    none) and ``distance`` (hash bits to it), ``sharpness`` (variance of the Laplacian at a fixed
    size), ``noise`` (the noise's estimated sigma, in grey levels), ``entropy`` (bits), ``width``
    and ``height``. Signals only: nothing is deleted or skipped.

    ``images``: an image handle, a batch, a chain's result, a file path, a folder (its PNG, JPEG
    and WebP files, by name), a PIL image, or a list of them. Earlier means a smaller image id (ids grow as a service makes images), else earlier in the
    list; ``store`` (a ``HashStore``) adds the account's images measured before, and keeps these.
    ``limit``: the most hash bits (of 64) a near-duplicate differs by."""
    for module in ("numpy", "cv2", "pandas"):
        require(module, "quality")
    items = items_of(images)
    measured = _signals(items, store)
    nearest = _nearest(items, measured, store.hashes() if store is not None else {}, limit)
    rows = [{"image_id": item.image_id, "path": item.path, **{k: values[k] for k in _SHOWN}, **near}
            for item, values, near in zip(items, measured, nearest)]
    return _frame(rows)


def _nearest(items: list[Item], measured: list[dict[str, Any]], earlier: dict[int, tuple[int, bytes, float]],
             limit: int) -> list[dict[str, Any]]:
    """For each item, the first image before it among those within ``limit`` bits of its hash whose
    colour layout and shape are close too (``dup_of``, ``distance``; None when there is none), so copies of
    copies name the one they all repeat. Before and first mean a smaller id (``earlier``: the
    store's, by id), else earlier in the list."""
    import numpy as np

    if not items:
        return []
    listed = {item.image_id for item in items}
    kept = [i for i in earlier if i not in listed]
    ids = np.array([*kept, *(-1 if i.image_id is None else i.image_id for i in items)], np.int64)
    hashes = np.array([earlier[i][0] for i in kept] + [int(m["phash"], 16) for m in measured], np.uint64)
    layouts = np.frombuffer(b"".join([earlier[i][1] for i in kept] + [m["colours"] for m in measured]),
                            np.uint8).reshape(len(ids), -1).astype(np.int16)
    shapes = np.log([earlier[i][2] for i in kept] + [m["width"] / m["height"] for m in measured])
    keys: list[Any] = [*kept, *(i.image_id if i.image_id is not None else i.path if i.path is not None else n
                               for n, i in enumerate(items))]
    position = np.arange(len(ids)) - len(kept)  # the items' places in the list (the store's come first)
    # the first made of those it repeats: by id (the service's order), then files and pictures by place
    first = np.where(ids >= 0, ids, ids.max(initial=0) + 1 + position)
    found: list[dict[str, Any]] = []
    for n, item in enumerate(items):
        me = len(kept) + n
        before = position < n
        if item.image_id is not None:  # by id among images with one; by place in the list otherwise
            before = np.where(ids >= 0, ids < item.image_id, before)
        before[me] = False
        bits = np.unpackbits((hashes ^ hashes[me]).view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
        near = before & (bits <= limit) & (np.abs(shapes - shapes[me]) <= pixels.DUPLICATE_SHAPE)
        near[near] = np.abs(layouts[near] - layouts[me]).mean(axis=1) <= pixels.DUPLICATE_COLOURS
        if not near.any():
            found.append({"dup_of": None, "distance": None})
            continue
        candidates = np.flatnonzero(near)
        best = int(candidates[np.argmin(first[candidates])])
        found.append({"dup_of": keys[best], "distance": int(bits[best])})
    return found


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    frame = frame.astype({"image_id": "Int64", "distance": "Int64", "width": "Int64", "height": "Int64"})
    earlier = [row["dup_of"] for row in rows]  # an id, a path or a row: kept as given (pandas would make ids floats)
    shown = [value for value in earlier if value is not None]
    frame["dup_of"] = pd.array(earlier, dtype="Int64" if all(isinstance(v, int) for v in shown) else object)
    return frame


def edit_leak(before: Any, after: Any, mask: Any, *, tolerance: int = pixels.LEAK_TOLERANCE,
              margin: int | None = None) -> float:
    """The share (0 to 1) of the pixels outside ``mask`` that an edit changed from ``before`` to
    ``after`` by more than ``tolerance`` (of 255) in brightness. Each of the three: an image handle,
    a file, bytes, a PIL image or an array; the mask white where the edit was asked to change. The
    result (larger, say) and the mask are scaled to ``before``'s size; pixels within ``margin`` of
    the mask count as inside, since edits blend their edges (default: the longer side / 128, at least 4)."""
    require("numpy", "quality")
    require("cv2", "quality")
    first, second, where = load(before, "before image"), load(after, "after image"), load(mask, "mask")
    return pixels.leak(first, second, where, tolerance, margin)
