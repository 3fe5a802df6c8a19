"""Images: create, metadata, binary (in memory or streamed to disk), waiting for PENDING ones."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypedDict, Unpack, cast

from .. import models  # the model classes load on the first response (see imagekit.models)
from .._http import Call, Charge, Response, charge_of
from .._retry import RetryPolicy
from ..config import Config
from ..errors import GenerationFailedError, WaitTimeoutError
from ..images import AsyncCreateResult, AsyncImage, CreateResult, Image
from ..media import ImageSource, image_source, save_type
from ..models.status import FAILED, PENDING
from ..validation import CREATE_FIELDS, check_create, resolve_style, style_note
from ._common import AsyncNamespace, Namespace, compact, parse, platform_headers

log = logging.getLogger("imagekit")

if TYPE_CHECKING:
    import httpx

    from ..models import CreateResponse, ImageMeta, Style
    from ..provenance import Provenance


class CreateOptions(TypedDict, total=False):
    """Options of ``create`` besides the prompt. Exactly one of image, style, collection is needed."""

    style: Style | int | str
    """Style id (or a Style, or the name of one of the account's own styles, resolved to its id)."""
    image: ImageSource
    """Reference image: a handle, an id, a path, bytes, a PIL image or a NumPy array."""
    collection: int
    """Collection id."""
    count: int
    """Images to generate: 1, 2 or 4."""
    ratio: str
    """square, vertical, horizontal, 1:1, 3:4, 4:3, 9:16 or 16:9."""
    seed: int
    """Sandbox extension: image i uses seed + i, shown back as GenerationInfo.variation_id."""
    is_async: bool
    """Return at once with PENDING images; use ``wait()`` on the result."""
    group_id: str
    """Group id."""
    random_prompt: bool | str
    """The random-prompt flag, sent as given."""
    initial_prompt: str
    """The user's prompt before text-to-prompt."""
    enhanced_prompt: str
    """The prompt after text-to-prompt."""
    caption_prompt: str
    """The image-to-prompt text."""
    caption_t_prompt: str
    """The translated image-to-prompt text."""
    platform: str
    """Platform tag for this call (web, app, figma, api)."""
    api_type: str
    """API type for this call (standard, enterprise)."""
    extra_body: dict[str, Any]
    """More body fields, sent as given."""
    timeout: float
    """Seconds allowed for this call."""


_BODY_OPTIONS = (  # option -> Wire attribute holding its body field name
    ("style", "style_id"), ("collection", "collection_id"), ("count", "count"),
    ("is_async", "is_async"), ("seed", "seed"), ("group_id", "group_id"),
    ("random_prompt", "random_prompt"), ("initial_prompt", "initial_prompt"),
    ("enhanced_prompt", "enhanced_prompt"), ("caption_prompt", "caption_prompt"),
    ("caption_t_prompt", "caption_t_prompt"),
)
_CALL_OPTIONS = {"image", "ratio", "platform", "api_type", "extra_body", "timeout"}


def create_call(config: Config, prompt: str, options: CreateOptions) -> Call:
    """The POST /api/images/create request, its options checked (a style given by id)."""
    return _create_request(config, prompt, checked_create(prompt, options))


def checked_create(prompt: str, options: CreateOptions, *, names: bool = False) -> CreateOptions:
    """``options`` with their names and values checked once, against the interface, before any
    request (the styles' read included) and as they are sent; ``names``: a style may be given by
    name, left for ``resolve_style``."""
    _check_names(options)
    return cast(CreateOptions, {**options, **check_create(prompt, _checked_fields(options), names=names)})


def _create_request(config: Config, prompt: str, values: CreateOptions) -> Call:
    """The request of options ``checked_create`` has checked."""
    wire = config.wire
    body: dict[str, Any] = {"prompt": prompt, "ratio": values.get("ratio")}
    if values.get("image") is not None:
        body["image"] = image_source(values["image"])
    body.update({getattr(wire, attr): values.get(name) for name, attr in _BODY_OPTIONS})
    body = compact(body) | values.get("extra_body", {})
    headers = platform_headers(config, values.get("platform"))
    api_type = values.get("api_type") or config.api_type
    if api_type:
        headers[wire.api_type_header] = api_type
    return Call("POST", "/api/images/create", json=body, headers=headers, timeout=values.get("timeout"),
                operation="create")


def _checked_fields(options: CreateOptions) -> dict[str, Any]:
    return {name: value for name, value in options.items() if name in CREATE_FIELDS}


def _check_names(options: CreateOptions) -> None:
    """A misspelt option is a TypeError naming it, before its values are checked."""
    unknown = set(options) - _CALL_OPTIONS - {name for name, _ in _BODY_OPTIONS}
    if unknown:
        raise TypeError(f"create() got unexpected options: {', '.join(sorted(unknown))}")


def _with_style(options: CreateOptions, styles: list[Style]) -> CreateOptions:
    """Checked ``options`` whose style, given by name, is resolved among the account's ``styles``."""
    name = str(options["style"])
    style_id = resolve_style(name, styles)
    log.warning("%s", style_note(name, style_id, styles))
    return {**options, "style": style_id}


def _named(options: CreateOptions) -> bool:
    return isinstance(options.get("style"), str)


def _created(response: Response, config: Config) -> tuple[CreateResponse, Charge]:
    return parse(models.CreateResponse, response), charge_of(response, config)


def meta_call(image_id: int, retry: RetryPolicy | None = None) -> Call:
    """The GET /api/images/{id} request (``retry``: its own retry policy, instead of the client's)."""
    return Call("GET", f"/api/images/{int(image_id)}", read="image", source_id=int(image_id), retry=retry)


def binary_call(config: Config, image_id: int, type: str | None = "png", scale: str | None = None,
                watermark: bool | None = None, collection: bool | None = None,
                retry: RetryPolicy | None = None) -> Call:
    """The GET /api/images/{id}/binary request (``retry``: its own retry policy)."""
    wire = config.wire
    params = compact({
        wire.image_type: type,
        wire.scale_size: scale,
        wire.watermark: _flag(watermark),
        wire.is_collection: _flag(collection),
    })
    return Call("GET", f"/api/images/{int(image_id)}/binary", params=params, headers={"Accept": "*/*"},
                retry=retry)


def _flag(value: bool | None) -> str | None:
    return None if value is None else ("true" if value else "false")


def poll_delays(first: float = 0.2, factor: float = 1.5, cap: float = 2.0) -> Iterator[float]:
    """Growing pauses between status polls."""
    delay = first
    while True:
        yield delay
        delay = min(cap, delay * factor)


def _settled(meta: ImageMeta, image_id: int) -> bool:
    if meta.generation_status == FAILED:
        raise GenerationFailedError(image_id, meta.generation_error or "generation failed")
    return meta.generation_status != PENDING


def _written(buffer: IO[bytes], path: Path, record: Provenance) -> Path:
    """The downloaded image in ``buffer`` written to ``path`` with ``record`` inside: whole, or (if
    writing fails) not at all."""
    from ..provenance.embed import write
    from ..storage import split

    buffer.seek(0)
    store, name = split(path)
    write(buffer, store, name, record.text_fields())
    return path


def _save_path(path: str | os.PathLike[str], type: str | None = None) -> Path:
    """``path`` as a Path, once it is known to name a file in a folder that exists, of a type its name
    allows (one line, before anything is downloaded, if not)."""
    from ..storage import file_to_write

    file_to_write(path)
    save_type(path, type)
    return Path(path)


def _record(config: Config, image_id: int, provenance: Provenance | None) -> Provenance:
    from ..provenance import Provenance
    from ..provenance.record import file_service

    return (provenance or Provenance.of_meta(int(image_id), None)).completed(service=file_service(config))


class Images(Namespace):
    """Generating images and reading them back."""

    def create(self, prompt: str, **options: Unpack[CreateOptions]) -> CreateResult:
        """Generate images from a prompt plus one of ``image``, ``style`` or ``collection``."""
        options = checked_create(prompt, options, names=True)
        if _named(options):
            options = _with_style(options, self._client.users.styles())
        model, charge = _created(self._http.send(_create_request(self._config, prompt, options)), self._config)
        return CreateResult(self._client, model, charge, (prompt, options))

    def image(self, image_id: int) -> Image:
        """A handle on an existing image (no request is made)."""
        return Image(self._client, int(image_id))

    def meta(self, image_id: int, *, retry: RetryPolicy | None = None) -> ImageMeta:
        """Metadata of an image (``retry``: a retry policy for this call instead of the client's)."""
        return parse(models.ImageMeta, self._http.send(meta_call(image_id, retry)))

    def read(self, image_id: int, **query: Any) -> bytes:
        """The image's binary; ``type``, ``scale``, ``watermark``, ``collection`` select the form."""
        return self._http.send(binary_call(self._config, image_id, **query)).content

    def download(self, image_id: int, sink: IO[bytes], *, type: str | None = "png", retry: RetryPolicy | None = None,
                 **query: Any) -> None:
        """Stream the binary into ``sink``, a seekable binary file (a stream cut short is sent again
        under ``retry``, or the client's policy, and written over)."""
        self._http.download(binary_call(self._config, image_id, type, retry=retry, **query), sink)

    def download_request(self, image_id: int, *, type: str | None = "png") -> httpx.Request:
        """The request ``download`` sends, for another process to send (an engine's worker storing
        the image where the run keeps it); nothing is sent here."""
        return self._http.request(binary_call(self._config, image_id, type))

    def save(self, image_id: int, path: str | os.PathLike[str], *, type: str | None = None,
             retry: RetryPolicy | None = None, provenance: Provenance | None = None, **query: Any) -> Path:
        """Stream the binary to ``path`` (type from the suffix unless given) with ``provenance`` inside
        (default: what the image's metadata shows); return the path. ``retry``: a retry policy for this
        call instead of the client's (a stream cut short is sent again under it too)."""
        from ..provenance import Provenance
        from ..storage import spool

        path = _save_path(path, type)
        provenance = provenance or Provenance.of_meta(image_id, self.meta(image_id, retry=retry))
        with spool() as buffer:
            self.download(image_id, buffer, type=save_type(path, type), retry=retry, **query)
            return _written(buffer, path, _record(self._config, image_id, provenance))

    def wait(self, image_id: int, *, timeout: float = 300.0) -> ImageMeta:
        """Poll until the image leaves PENDING; raise GenerationFailedError if it FAILED."""
        deadline = time.monotonic() + timeout
        for delay in poll_delays():
            meta = self.meta(image_id)
            if _settled(meta, image_id):
                return meta
            if time.monotonic() + delay > deadline:
                raise WaitTimeoutError(f"image {image_id} still PENDING after {timeout}s")
            time.sleep(delay)
        raise AssertionError("unreachable")


class AsyncImages(AsyncNamespace):
    """Generating images and reading them back (awaitable)."""

    async def create(self, prompt: str, **options: Unpack[CreateOptions]) -> AsyncCreateResult:
        """Generate images from a prompt plus one of ``image``, ``style`` or ``collection``."""
        options = checked_create(prompt, options, names=True)
        if _named(options):
            options = _with_style(options, await self._client.users.styles())
        response = await self._http.send(_create_request(self._config, prompt, options))
        model, charge = _created(response, self._config)
        return AsyncCreateResult(self._client, model, charge, (prompt, options))

    def image(self, image_id: int) -> AsyncImage:
        """A handle on an existing image (no request is made)."""
        return AsyncImage(self._client, int(image_id))

    async def meta(self, image_id: int, *, retry: RetryPolicy | None = None) -> ImageMeta:
        """Metadata of an image (``retry``: a retry policy for this call instead of the client's)."""
        return parse(models.ImageMeta, await self._http.send(meta_call(image_id, retry)))

    async def read(self, image_id: int, **query: Any) -> bytes:
        """The image's binary; ``type``, ``scale``, ``watermark``, ``collection`` select the form."""
        return (await self._http.send(binary_call(self._config, image_id, **query))).content

    def read_blocking(self, image_id: int, **query: Any) -> bytes:
        """``read`` without awaiting, for places that cannot await (notebook display)."""
        return self._http.blocking().send(binary_call(self._config, image_id, **query)).content

    async def download(self, image_id: int, sink: IO[bytes], *, type: str | None = "png",
                       retry: RetryPolicy | None = None, **query: Any) -> None:
        """Stream the binary into ``sink``, a seekable binary file (a stream cut short is sent again
        under ``retry``, or the client's policy, and written over)."""
        await self._http.download(binary_call(self._config, image_id, type, retry=retry, **query), sink)

    def download_request(self, image_id: int, *, type: str | None = "png") -> httpx.Request:
        """The request ``download`` sends, for another process to send (an engine's worker storing
        the image where the run keeps it); nothing is sent here."""
        return self._http.request(binary_call(self._config, image_id, type))

    async def save(self, image_id: int, path: str | os.PathLike[str], *, type: str | None = None,
                   retry: RetryPolicy | None = None, provenance: Provenance | None = None, **query: Any) -> Path:
        """Stream the binary to ``path`` (type from the suffix unless given) with ``provenance`` inside
        (default: what the image's metadata shows); return the path. ``retry``: a retry policy for this
        call instead of the client's (a stream cut short is sent again under it too)."""
        from ..provenance import Provenance
        from ..storage import spool

        path = _save_path(path, type)
        provenance = provenance or Provenance.of_meta(image_id, await self.meta(image_id, retry=retry))
        with spool() as buffer:
            await self.download(image_id, buffer, type=save_type(path, type), retry=retry, **query)
            return _written(buffer, path, _record(self._config, image_id, provenance))

    async def wait(self, image_id: int, *, timeout: float = 300.0) -> ImageMeta:
        """Poll until the image leaves PENDING; raise GenerationFailedError if it FAILED."""
        deadline = time.monotonic() + timeout
        for delay in poll_delays():
            meta = await self.meta(image_id)
            if _settled(meta, image_id):
                return meta
            if time.monotonic() + delay > deadline:
                raise WaitTimeoutError(f"image {image_id} still PENDING after {timeout}s")
            import anyio  # loads with async code, not with `import imagekit`

            await anyio.sleep(delay)
        raise AssertionError("unreachable")
