"""Contact sheets: a grid of thumbnails, each captioned, as a matplotlib figure."""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from PIL.Image import Image as Picture

    from ..client import AsyncClient, Client

__all__ = ["contact_sheet", "label_of", "read_now"]


def label_of(record: Mapping[Hashable, Any], fields: Sequence[str]) -> str:
    """A caption from some fields of a record: ``prompt · Oil paint #3 · ratio 16:9`` (a style is
    shown as its label, see ``style_label``)."""
    parts = []
    for name in fields:
        value = record.get(name)
        if value is None or value != value:  # NaN
            continue
        parts.append(str(value) if name in ("prompt", "style") else f"{name} {value}")
    return " · ".join(parts)


def read_now(client: Client | AsyncClient, image_id: int, type: str = "png") -> bytes:
    """An image's bytes, read without awaiting (an async client's blocking twin reads them)."""
    from ..resources.images import Images

    images = client.images
    return images.read(image_id, type=type) if isinstance(images, Images) else images.read_blocking(image_id, type=type)


def _pixels(source: str | Path | int, client: Client | AsyncClient | None, thumb: int) -> Picture:
    from PIL import Image

    if isinstance(source, (str, Path)):  # a file the run saved: a path, or a URL (an out_dir in object storage)
        from ..storage import opened

        with opened(source) as stored:
            picture = Image.open(io.BytesIO(stored.read()))
    else:  # an image id: fetch it
        if client is None:
            raise ValueError(f"image {source}: a contact sheet of image ids needs the client to read them")
        picture = Image.open(io.BytesIO(read_now(client, source)))
    picture.thumbnail((thumb * 2, thumb * 2))
    return picture.convert("RGBA")


def contact_sheet(items: Sequence[tuple[str, str | Path | int]], client: Client | AsyncClient | None = None, *,
                  columns: int | None = None, thumb: int = 160, title: str | None = None) -> Figure:
    """A figure of ``(caption, path or image id)`` items; ids are read through ``client``."""
    from matplotlib.figure import Figure

    count = max(1, len(items))
    columns = columns or min(count, max(1, math.ceil(math.sqrt(count * 1.5))))
    rows = math.ceil(count / columns)
    inches = thumb / 72
    figure = Figure(figsize=(columns * inches, rows * (inches + 0.45) + (0.4 if title else 0)), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    for ax, (caption, source) in zip(axes.flat, items):
        ax.imshow(_pixels(source, client, thumb))
        ax.set_title("\n".join(textwrap.wrap(caption, 28)[:3]), fontsize=7)
    if not items:
        axes.flat[0].text(0.5, 0.5, "no images", ha="center", va="center")
    if title:
        figure.suptitle(title)
    return figure
