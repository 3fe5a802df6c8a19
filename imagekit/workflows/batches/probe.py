"""The probe: finding the images of a create whose answer was lost, by reading, never by sending
the create again.

It reads the caller's images above the highest own image id known when the create was sent,
skipping those other rows of the journal hold. An image is the row's when its metadata shows the
row's group id, or, when metadata shows no group ids at all (the interface as specified), when it
is the caller's and no other row holds it: the runner makes that sound by never having two such
creates without an answer at once.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

import anyio

from ...errors import ImagekitError, ImageNotFoundError
from ...models import ImageMeta
from .journals.journal import Journal, RowRecord
from .options import RunOptions

if TYPE_CHECKING:
    from ...client import AsyncClient
    from ...models import Style

__all__ = ["find_images", "group_of", "thumbnail_ids"]

_THUMB = re.compile(r"/api/images/(\d+)/")


def thumbnail_ids(styles: list[Style]) -> list[int]:
    """Image ids of the caller's own style thumbnails: known own images, a floor for the probe."""
    return [int(m.group(1)) for s in styles if (m := _THUMB.search(s.thumb_link or ""))]


async def find_images(client: AsyncClient, journal: Journal, entry: RowRecord, count: int, tagged: bool,
                      options: RunOptions) -> dict[int, ImageMeta]:
    """The images of ``entry``'s lost create by id, up to ``count``; ``tagged``: metadata shows group
    ids, so an image without the row's is another create's. Raises ImagekitError when a read fails."""
    if entry.low_id is None:
        raise ImagekitError("no image id is known to search from")
    await anyio.sleep(options.settle_delay)
    # One call, retried by the client's layer: a read is safe to repeat, and one unanswered read
    # must not leave a row uncertain (a loop here would multiply the client's own retries).
    patient = replace(client.config.retry, max_retries=max(0, options.probe_reads - 1))
    taken = {i for other in journal.load().values() for i in other.image_ids}
    found: dict[int, ImageMeta] = {}
    misses, image_id = 0, entry.low_id
    while len(found) < count and misses < options.probe_window:
        image_id += 1
        if image_id in taken:
            continue
        try:
            meta = await client.images.meta(image_id, retry=patient)
        except ImageNotFoundError:  # not an image, or someone else's: both answer alike
            misses += 1
            continue
        group = group_of(meta)
        if group != entry.group_id and (group is not None or tagged):  # another create's
            misses += 1
            continue
        found[image_id] = meta
        misses = 0
    return found


def group_of(meta: ImageMeta) -> str | None:
    """The group id image metadata shows (the interface itself shows none)."""
    return meta.generation_info.group_id if meta.generation_info is not None else None
