"""Image handles: one image on the service, with its metadata, bytes, display and edits.

``Image`` (from ``Client``) and ``AsyncImage`` (from ``AsyncClient``) are twins: the same methods,
the async ones awaitable. Both show in a notebook as a small thumbnail, never as base64 text.
"""

from __future__ import annotations

import base64
import binascii
import html
import io
import logging
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar, Unpack

from .errors import GenerationFailedError, ImagekitError
from .media import MaskSource, save_type, thumbnail_png
from .models.status import FAILED, PENDING

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from ._http import Charge
    from .client import AsyncClient, Client
    from .models import CreateResponse, EditedImage, GeneratedImage, ImageMeta
    from .provenance import Provenance

__all__ = ["Image", "AsyncImage", "CreateResult", "AsyncCreateResult", "EditOptions", "new_request_id"]

log = logging.getLogger("imagekit")
Pair = tuple[float, float]
CreateRequest = tuple[str, Mapping[str, Any]]
"""A create's prompt and options, as sent: what its images' provenance records."""
ClientT = TypeVar("ClientT", "Client", "AsyncClient")


class EditOptions(TypedDict, total=False):
    """Options every edit takes."""

    request_id: str
    """Id to cancel the edit by; generated when not given."""
    timeout: float
    """Seconds to wait for the result; when they run out the edit is cancelled on the server."""


def new_request_id() -> str:
    """A fresh edit request id (what ``EditOptions.request_id`` defaults to)."""
    return uuid.uuid4().hex


class _Handle(Generic[ClientT]):
    """State and display shared by the sync and async handles."""

    def __init__(self, client: ClientT, image_id: int, *, info: GeneratedImage | EditedImage | ImageMeta | None = None,
                 charge: Charge = (None, None), request_id: str | None = None,
                 origin: Provenance | None = None) -> None:
        self._client: ClientT = client
        self.id = int(image_id)
        """The image id."""
        self.info = info
        """The last model seen for this image: GeneratedImage, EditedImage or ImageMeta."""
        self.credits_charged, self.credits_remaining = charge
        self.request_id = request_id
        """The edit request id that produced this image, if an edit did."""
        self._origin = origin
        self._thumb: bytes | None = None

    @property
    def client(self) -> ClientT:
        """The client this handle makes its requests with."""
        return self._client

    @property
    def status(self) -> str | None:
        """PENDING, COMPLETED or FAILED when known (an edit's result is complete)."""
        return getattr(self.info, "generation_status", None)

    @property
    def resolution(self) -> str | None:
        """Resolution, WxH, when known."""
        return getattr(self.info, "resolution", None)

    @property
    def credits(self) -> float | None:
        """Credits the image cost, when known: the answer's credit headers (a create's share per
        image), else the ledger's record of its edit request, else its metadata's creditCost."""
        credits = self.credits_charged if self.credits_charged is not None else getattr(self._origin, "credits", None)
        ledger = self._client.ledger
        if credits is None and self.request_id is not None and ledger is not None:
            credits = ledger.credits_of(self.request_id)
        cost = getattr(self.info, "credit_cost", None)  # ImageMeta has it
        return float(cost) if credits is None and cost is not None else credits

    @property
    def provenance(self) -> Provenance:
        """How the image was made, as far as this handle knows (its create or edit, when it came from
        one): what a file saved from it carries inside (see ``imagekit.read_provenance``)."""
        from .provenance import Provenance
        from .provenance.record import file_service

        origin = self._origin or Provenance.of_meta(self.id, self.info if self._knows_meta() else None)
        return origin.completed(credits=self.credits, service=file_service(self._client.config))

    def _knows_meta(self) -> bool:
        """Whether ``info`` is the image's metadata (what a handle not made here can tell of its request)."""
        return type(self.info).__name__ == "ImageMeta"

    def __repr__(self) -> str:
        parts = [f"id={self.id}"] + [f"{k}={v!r}" for k, v in
                                     (("status", self.status), ("resolution", self.resolution)) if v]
        return f"{type(self).__name__}({', '.join(parts)})"

    def _fetch_png(self) -> bytes:
        raise NotImplementedError

    def _thumbnail(self) -> bytes | None:
        if self.status in (PENDING, FAILED):
            return None
        if self._thumb is None:
            try:  # display must never raise: a notebook falls back to the text repr
                # A create response may carry the pixels; otherwise ask the service.
                pixels = _decode(getattr(self.info, "base64", None)) or self._fetch_png()
                self._thumb = thumbnail_png(pixels)
            except Exception as exc:  # noqa: BLE001
                log.debug("no thumbnail for image %s: %s", self.id, exc)
        return self._thumb

    def _repr_png_(self) -> bytes | None:
        return self._thumbnail()

    def _repr_html_(self) -> str:
        thumb = self._thumbnail()
        caption = " · ".join(str(x) for x in (f"#{self.id}", self.status, self.resolution) if x)
        if self.credits_charged is not None:
            caption += f" · {self.credits_charged} credits"
        picture = (
            f'<img src="data:image/png;base64,{base64.b64encode(thumb).decode()}" alt="image {self.id}">'
            if thumb else ""
        )
        return (
            f'<figure style="display:inline-block;margin:4px;text-align:center">{picture}'
            f'<figcaption style="font:12px monospace">{html.escape(caption)}</figcaption></figure>'
        )


def _decode(data: str | None) -> bytes | None:
    if not data:
        return None
    try:
        return base64.b64decode(data.split(",", 1)[-1], validate=False)
    except (binascii.Error, ValueError):
        return None


class Image(_Handle["Client"]):
    """An image on the service."""

    def meta(self) -> ImageMeta:
        """Fetch the image's metadata (and remember it as ``info``)."""
        self.info = meta = self._client.images.meta(self.id)
        return meta

    def read(self, type: str = "png", *, scale: str | None = None, watermark: bool | None = None,
             collection: bool | None = None) -> bytes:
        """The image's bytes as ``type`` (jpeg, png, webp; svg for vectorized images)."""
        return self._client.images.read(self.id, type=type, scale=scale, watermark=watermark,
                                        collection=collection)

    def pil(self) -> PILImage:
        """The image as a PIL image."""
        from PIL import Image as PILImageModule

        picture = PILImageModule.open(io.BytesIO(self.read("png")))
        picture.load()
        return picture

    def save(self, path: str | os.PathLike[str], *, type: str | None = None, scale: str | None = None,
             watermark: bool | None = None, collection: bool | None = None) -> Path:
        """Stream the image to ``path`` with its ``provenance`` inside (the credits of an image this
        handle made read from its metadata when nothing told them, and what the metadata shows of a
        handle's image made elsewhere); the type follows the suffix unless given. A file at ``path`` is
        replaced, as PIL's ``save`` replaces one: the path names it (a batch's ``out_dir`` never does)."""
        from .storage import file_to_write  # loaded on first use, as storage goes (see test_import_stays_light)

        file_to_write(path)  # a place that cannot hold the file is refused before any request
        save_type(path, type)  # and so is a name that says another format than the file would hold
        if (self._origin is not None and self.credits is None) or (self._origin is None and not self._knows_meta()):
            self.meta()
        return self._client.images.save(self.id, path, type=type, scale=scale, watermark=watermark,
                                        collection=collection, provenance=self.provenance)

    def wait(self, timeout: float = 300.0) -> Image:
        """Wait until the image leaves PENDING; raise GenerationFailedError if it FAILED."""
        self.info = self._client.images.wait(self.id, timeout=timeout)
        return self

    def enhance(self, scale: str = "2x", **options: Unpack[EditOptions]) -> Image:
        """Enhance detail and upscale by ``scale`` (2x, 4x or 8x)."""
        return self._client.edits.enhance(self.id, scale, **options)

    def outpaint(self, *, canvas: Pair, size: Pair, at: Pair, **options: Unpack[EditOptions]) -> Image:
        """Expand the canvas to ``canvas`` (w, h), this image drawn at ``at`` (x, y) with ``size``."""
        return self._client.edits.outpaint(self.id, canvas=canvas, size=size, at=at, **options)

    def retry(self, *, strength: str | None = None, **options: Unpack[EditOptions]) -> Image:
        """Reimagine the image; ``strength`` is strong or subtle."""
        return self._client.edits.retry(self.id, strength=strength, **options)

    def fill(self, mask: MaskSource, prompt: str, negative: str = "", *, resize: bool = False,
             **options: Unpack[EditOptions]) -> Image:
        """Regenerate the masked area from ``prompt`` (mask: PIL image, array, path or PNG bytes, at
        this image's size; ``resize=True`` scales one of another size, which otherwise raises ValueError)."""
        return self._client.edits.fill(self, mask, prompt, negative, resize=resize, **options)

    def clean_up(self, mask: MaskSource, *, resize: bool = False, **options: Unpack[EditOptions]) -> Image:
        """Remove the masked object (the mask as for ``fill``)."""
        return self._client.edits.clean_up(self, mask, resize=resize, **options)

    def remove_bg(self, **options: Unpack[EditOptions]) -> Image:
        """Remove the background."""
        return self._client.edits.remove_bg(self.id, **options)

    def vectorize(self, **options: Unpack[EditOptions]) -> Image:
        """Vectorize; read the result with ``type="svg"``."""
        return self._client.edits.vectorize(self.id, **options)

    def upsize(self, **options: Unpack[EditOptions]) -> Image:
        """Upscale."""
        return self._client.edits.upsize(self.id, **options)

    def _fetch_png(self) -> bytes:
        return self.read("png")


class AsyncImage(_Handle["AsyncClient"]):
    """An image on the service (awaitable methods)."""

    async def meta(self) -> ImageMeta:
        """Fetch the image's metadata (and remember it as ``info``)."""
        self.info = meta = await self._client.images.meta(self.id)
        return meta

    async def read(self, type: str = "png", *, scale: str | None = None, watermark: bool | None = None,
                   collection: bool | None = None) -> bytes:
        """The image's bytes as ``type`` (jpeg, png, webp; svg for vectorized images)."""
        return await self._client.images.read(self.id, type=type, scale=scale, watermark=watermark,
                                              collection=collection)

    async def pil(self) -> PILImage:
        """The image as a PIL image."""
        from PIL import Image as PILImageModule

        picture = PILImageModule.open(io.BytesIO(await self.read("png")))
        picture.load()
        return picture

    async def save(self, path: str | os.PathLike[str], *, type: str | None = None, scale: str | None = None,
                   watermark: bool | None = None, collection: bool | None = None) -> Path:
        """Stream the image to ``path`` with its ``provenance`` inside (the credits of an image this
        handle made read from its metadata when nothing told them, and what the metadata shows of a
        handle's image made elsewhere); the type follows the suffix unless given. A file at ``path`` is
        replaced, as PIL's ``save`` replaces one: the path names it (a batch's ``out_dir`` never does)."""
        from .storage import file_to_write  # loaded on first use, as storage goes (see test_import_stays_light)

        file_to_write(path)  # a place that cannot hold the file is refused before any request
        save_type(path, type)  # and so is a name that says another format than the file would hold
        if (self._origin is not None and self.credits is None) or (self._origin is None and not self._knows_meta()):
            await self.meta()
        return await self._client.images.save(self.id, path, type=type, scale=scale, watermark=watermark,
                                              collection=collection, provenance=self.provenance)

    async def wait(self, timeout: float = 300.0) -> AsyncImage:
        """Wait until the image leaves PENDING; raise GenerationFailedError if it FAILED."""
        self.info = await self._client.images.wait(self.id, timeout=timeout)
        return self

    async def enhance(self, scale: str = "2x", **options: Unpack[EditOptions]) -> AsyncImage:
        """Enhance detail and upscale by ``scale`` (2x, 4x or 8x)."""
        return await self._client.edits.enhance(self.id, scale, **options)

    async def outpaint(self, *, canvas: Pair, size: Pair, at: Pair,
                       **options: Unpack[EditOptions]) -> AsyncImage:
        """Expand the canvas to ``canvas`` (w, h), this image drawn at ``at`` (x, y) with ``size``."""
        return await self._client.edits.outpaint(self.id, canvas=canvas, size=size, at=at, **options)

    async def retry(self, *, strength: str | None = None, **options: Unpack[EditOptions]) -> AsyncImage:
        """Reimagine the image; ``strength`` is strong or subtle."""
        return await self._client.edits.retry(self.id, strength=strength, **options)

    async def fill(self, mask: MaskSource, prompt: str, negative: str = "", *, resize: bool = False,
                   **options: Unpack[EditOptions]) -> AsyncImage:
        """Regenerate the masked area from ``prompt`` (mask: PIL image, array, path or PNG bytes, at
        this image's size; ``resize=True`` scales one of another size, which otherwise raises ValueError)."""
        return await self._client.edits.fill(self, mask, prompt, negative, resize=resize, **options)

    async def clean_up(self, mask: MaskSource, *, resize: bool = False, **options: Unpack[EditOptions]) -> AsyncImage:
        """Remove the masked object (the mask as for ``fill``)."""
        return await self._client.edits.clean_up(self, mask, resize=resize, **options)

    async def remove_bg(self, **options: Unpack[EditOptions]) -> AsyncImage:
        """Remove the background."""
        return await self._client.edits.remove_bg(self.id, **options)

    async def vectorize(self, **options: Unpack[EditOptions]) -> AsyncImage:
        """Vectorize; read the result with ``type="svg"``."""
        return await self._client.edits.vectorize(self.id, **options)

    async def upsize(self, **options: Unpack[EditOptions]) -> AsyncImage:
        """Upscale."""
        return await self._client.edits.upsize(self.id, **options)

    def _fetch_png(self) -> bytes:
        # A notebook calls reprs synchronously, even under a running loop: use the blocking twin.
        return self._client.images.read_blocking(self.id, type="png")


HandleT = TypeVar("HandleT", "Image", "AsyncImage")


class _Result(Generic[HandleT]):
    """The outcome of a create call: image handles, balances and what it cost."""

    def __init__(self, images: list[HandleT], response: CreateResponse, charge: Charge) -> None:
        self.response = response
        """The create response as the service sent it."""
        self.images: list[HandleT] = images
        """The generated images."""
        self.default_credit = response.default_credit
        self.daily_credit = response.daily_credit
        self.monthly_credit = response.monthly_credit
        self.credits_charged, self.credits_remaining = charge

    def __iter__(self) -> Iterator[HandleT]:
        return iter(self.images)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> HandleT:
        return self.images[index]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(images={self.images!r}, credits_charged={self.credits_charged!r}, "
                f"credits_remaining={self.credits_remaining!r})")

    def _repr_html_(self) -> str:
        cost = "" if self.credits_charged is None else f"{self.credits_charged} credits"
        left = "" if self.credits_remaining is None else f", {self.credits_remaining} left"
        pictures = "".join(image._repr_html_() for image in self.images)
        return f'<div>{pictures}<div style="font:12px monospace">{html.escape(cost + left)}</div></div>'

    def _deadline(self, timeout: float) -> float:
        return time.monotonic() + timeout


def _generated(response: CreateResponse, request: CreateRequest | None,
               charge: Charge) -> list[tuple[int, GeneratedImage, Provenance | None]]:
    """Each generated image with its id and how it was made; an image the service sent without an
    id is an error."""
    from .provenance import Provenance

    missing = [image for image in response.images if image.image_id is None]
    if missing:
        raise ImagekitError(f"the create response holds {len(missing)} image(s) without an imageId")
    share = None if charge[0] is None or not response.images else charge[0] / len(response.images)
    return [(int(image.image_id or 0), image,
             None if request is None else Provenance.of_create(int(image.image_id or 0), *request, credits=share))
            for image in response.images]


class CreateResult(_Result["Image"]):
    """The outcome of ``Client.create``: ``images`` (Image handles) and credits."""

    def __init__(self, client: Client, response: CreateResponse, charge: Charge,
                 request: CreateRequest | None = None) -> None:
        super().__init__([Image(client, image_id, info=image, origin=origin)
                          for image_id, image, origin in _generated(response, request, charge)], response, charge)

    def wait(self, timeout: float = 300.0, *, raise_on_failure: bool = True) -> CreateResult:
        """Wait until every image leaves PENDING; FAILED ones raise unless ``raise_on_failure`` is False."""
        deadline = self._deadline(timeout)
        for image in self.images:
            try:
                image.wait(timeout=max(0.0, deadline - time.monotonic()))
            except GenerationFailedError:
                image.meta()
                if raise_on_failure:
                    raise
        return self


class AsyncCreateResult(_Result["AsyncImage"]):
    """The outcome of ``AsyncClient.create``: ``images`` (AsyncImage handles) and credits."""

    def __init__(self, client: AsyncClient, response: CreateResponse, charge: Charge,
                 request: CreateRequest | None = None) -> None:
        super().__init__([AsyncImage(client, image_id, info=image, origin=origin)
                          for image_id, image, origin in _generated(response, request, charge)], response, charge)

    async def wait(self, timeout: float = 300.0, *, raise_on_failure: bool = True) -> AsyncCreateResult:
        """Wait until every image leaves PENDING; FAILED ones raise unless ``raise_on_failure`` is False."""
        deadline = self._deadline(timeout)
        for image in self.images:
            try:
                await image.wait(timeout=max(0.0, deadline - time.monotonic()))
            except GenerationFailedError:
                await image.meta()
                if raise_on_failure:
                    raise
        return self

