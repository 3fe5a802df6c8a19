"""GET /api/images/{id}, read on the event loop.

A batch polls every generation until it is done, so this is the sandbox's most frequent request
after authentication. Like the caller's lookup (:mod:`.callers`) it reads with prepared statements
on the loop's kept connection (:mod:`.reads`): a poll of a PENDING image is one indexed read, with
no worker thread and no ORM session. Only a finished image can have upscales or downloads, so
those are read for finished images alone.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from sqlalchemy import bindparam, or_, select

from ..interface.errors import SandboxError
from ..store.reads import LoopReader, PreparedRead, detached
from ..store.tables import Collection, DownloadLog, Image, User
from .views import image_meta_view

UPSCALES = ("enhance", "upsize")
"""Edit modes whose result is an upscale of its source (listed in the source's ``Upscaled``)."""
DOWNLOADS_SHOWN = 50

_IMAGES, _DOWNLOADS, _COLLECTIONS = Image.__table__, DownloadLog.__table__, Collection.__table__
_IMAGE_FIELDS = tuple(column.key for column in _IMAGES.columns)
_DOWNLOAD_FIELDS = tuple(column.key for column in _DOWNLOADS.columns)
_COLLECTION_FIELDS = tuple(column.key for column in _COLLECTIONS.columns)
_IMAGE = select(_IMAGES).where(_IMAGES.c.image_id == bindparam("image_id"))
# ``or_`` rather than ``in_``: a prepared statement has no list parameters to expand.
_UPSCALES_OF = (select(_IMAGES).where(_IMAGES.c.source_id == bindparam("image_id"),
                                      or_(*(_IMAGES.c.mode == mode for mode in UPSCALES)),
                                      _IMAGES.c.status == "COMPLETED").order_by(_IMAGES.c.image_id))
# A viewer sees their own downloads only: other users' ids are theirs to keep.
_DOWNLOADS_BY = (select(_DOWNLOADS).where(_DOWNLOADS.c.image_id == bindparam("image_id"),
                                          _DOWNLOADS.c.user_id == bindparam("user_id"))
                 .order_by(_DOWNLOADS.c.download_id.desc()).limit(DOWNLOADS_SHOWN))
_COLLECTION = select(_COLLECTIONS).where(_COLLECTIONS.c.collection_id == bindparam("collection_id"))


def readable_by(image: Image | None, user: User) -> TypeGuard[Image]:
    """Whether ``user`` may read ``image``: their own, or a public one."""
    return image is not None and image.owner_id in (None, user.user_id)


class ImageMeta:
    """The metadata documents of one app's images, read through ``reader``."""

    def __init__(self, reader: LoopReader, tagged: bool) -> None:
        engine = reader.engine
        self._reader, self._tagged = reader, tagged
        self._image, self._upscales = PreparedRead(_IMAGE, engine), PreparedRead(_UPSCALES_OF, engine)
        self._downloads, self._collection = PreparedRead(_DOWNLOADS_BY, engine), PreparedRead(_COLLECTION, engine)

    def document(self, caller: User, image_id: int) -> dict[str, Any]:
        """Image ``image_id`` as ``caller`` sees it: their own or a public one; 404 otherwise."""
        image = self._read_image(image_id)
        if not readable_by(image, caller):
            raise SandboxError("image_not_found", f"No image {image_id}.")
        upscaled: list[Image] = []
        downloads: list[DownloadLog] = []
        if image.status == "COMPLETED":
            upscaled = [detached(Image, _IMAGE_FIELDS, row) for row in self._reader.rows(self._upscales, image_id=image_id)]
            downloads = [detached(DownloadLog, _DOWNLOAD_FIELDS, row)
                         for row in self._reader.rows(self._downloads, image_id=image_id, user_id=caller.user_id)]
        collection = None
        if image.member_of is not None:
            row = self._reader.first(self._collection, collection_id=image.member_of)
            collection = detached(Collection, _COLLECTION_FIELDS, row) if row else None
        source = self._read_image(image.source_id) if image.mode in UPSCALES and image.source_id else None
        return image_meta_view(image, owner=caller if image.owner_id is not None else None, upscaled=upscaled,
                               downloads=downloads, collection=collection, source=source, tagged=self._tagged)

    def _read_image(self, image_id: int) -> Image | None:
        row = self._reader.first(self._image, image_id=image_id)
        return detached(Image, _IMAGE_FIELDS, row) if row else None
