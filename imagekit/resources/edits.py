"""Edits of existing images, and cancelling them.

Every edit carries a request id (generated when not given). When an edit is abandoned (its
``timeout`` fires, the connection drops, or the caller interrupts), the client cancels it on the
server through cancelEdit before the error reaches the caller, so an unseen result is not counted.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import TYPE_CHECKING, Any, Unpack
from urllib.parse import quote

from .. import models  # the model classes load on the first response (see imagekit.models)
from .._http import Call, Charge, Response, charge_of
from ..config import Config
from ..errors import APIConnectionError, ImagekitError
from ..images import AsyncImage, EditOptions, Image, new_request_id
from ..media import HasId, MaskSource, fitted_mask, mask_png, parse_resolution
from ..validation import check_edit, check_header
from ._common import AsyncNamespace, Namespace, compact, parse, platform_headers

if TYPE_CHECKING:
    from ..models import EditedImage
    from ..provenance import Provenance

log = logging.getLogger("imagekit")

CANCEL_TIMEOUT = 5.0  # a cancel runs while the caller waits on an error: keep it short
Pair = tuple[float, float]


OPERATION_OF = {"enhance": "enhance", "outpaint": "outpaint", "retry": "retry", "fill": "fill",
                "clean_up": "cleanUp", "remove_bg": "removeBg", "vectorize": "vectorize", "upsize": "upsize"}
"""Each edit method's operation, as its request's path and the ledger name it (prices follow it too)."""


def _edit(image_id: int, operation: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Call:
    """An edit's request, once its parameters are checked against the interface (``check_edit``)."""
    check_edit(operation, image_id, params or {})
    return Call("POST", f"/api/images/{int(image_id)}/{operation}", operation=operation, source_id=int(image_id),
                **kwargs)


def enhance_call(config: Config, image_id: int, scale: str) -> Call:
    """POST /api/images/{id}/enhance."""
    return _edit(image_id, "enhance", {"scale": scale}, json={config.wire.enhance_scale: scale})


def outpaint_call(image_id: int, canvas: Pair, size: Pair, at: Pair) -> Call:
    """POST /api/images/{id}/outpaint."""
    checked = check_edit("outpaint", image_id, {"canvas": canvas, "size": size, "at": at})
    body = {"canvasSize": list(checked["canvas"]), "originalImageSize": list(checked["size"]),
            "originalImageLocation": list(checked["at"])}
    return _edit(image_id, "outpaint", checked, json=body)


def retry_call(config: Config, image_id: int, strength: str | None) -> Call:
    """POST /api/images/{id}/retry."""
    return _edit(image_id, "retry", {"strength": strength}, json=compact({config.wire.retry_strength: strength}))


def fill_call(image_id: int, mask: MaskSource, prompt: str, negative: str) -> Call:
    """POST /api/images/{id}/fill (multipart)."""
    files = {"mask": ("mask.png", mask_png(mask), "image/png")}
    return _edit(image_id, "fill", {"mask": mask, "prompt": prompt, "negative": negative}, files=files,
                 data={"prompt": prompt, "negative": negative})


def clean_up_call(image_id: int, mask: MaskSource) -> Call:
    """POST /api/images/{id}/cleanUp (multipart)."""
    return _edit(image_id, OPERATION_OF["clean_up"], {"mask": mask},
                 files={"mask": ("mask.png", mask_png(mask), "image/png")})


def cancel_call(request_id: str, timeout: float | None = None) -> Call:
    """POST /api/images/cancelEdit/{requestId}."""
    return Call("POST", f"/api/images/cancelEdit/{quote(str(request_id), safe='')}", timeout=timeout,
                operation="cancelEdit", request_id=str(request_id))


def prepare(config: Config, call: Call, request_id: str | None, timeout: float | None) -> tuple[Call, str]:
    """The call with its request id, platform header and timeout; and the request id."""
    request_id = check_header("request_id", request_id) if request_id is not None else new_request_id()
    headers = {**platform_headers(config), config.wire.request_id_header: request_id}
    return dataclasses.replace(call, headers=headers, timeout=timeout, request_id=request_id), request_id


def _edited(response: Response, config: Config, request_id: str) -> tuple[int, EditedImage, Charge]:
    """The new image's id and model, and the charge, from an edit's answer."""
    image = parse(models.EditResult, response).image
    if image is None or image.image_id is None:
        raise ImagekitError(f"edit {request_id}: the response names no image")
    return image.image_id, image, charge_of(response, config)


def _origin(call: Call, params: dict[str, Any], image_id: int, request_id: str, charge: Charge) -> Provenance:
    """How an edit's result was made: its operation, source image and parameters (a mask is not kept)."""
    from ..provenance import Provenance

    return Provenance.of_edit(image_id, call.operation or "", call.source_id, params, request_id=request_id,
                              credits=charge[0])


def _id_of(image: int | HasId) -> int:
    return image.id if isinstance(image, HasId) else int(image)


def _known_size(image: int | HasId) -> tuple[int, int] | None:
    """The size a handle already knows (no request), else None."""
    return parse_resolution(getattr(image, "resolution", None))


def _cancel_status(response: Response) -> str:
    return str(json.loads(response.content))


def _cancelled() -> type[BaseException]:
    """The running async library's cancellation exception (anyio loads with async code only)."""
    import anyio

    return anyio.get_cancelled_exc_class()


class Edits(Namespace):
    """Editing images; each edit returns a handle on the new image."""

    def enhance(self, image_id: int, scale: str = "2x", **options: Unpack[EditOptions]) -> Image:
        """Enhance detail and upscale by ``scale`` (2x, 4x or 8x)."""
        return self._run(enhance_call(self._config, image_id, scale), {"scale": scale}, **options)

    def outpaint(self, image_id: int, *, canvas: Pair, size: Pair, at: Pair,
                 **options: Unpack[EditOptions]) -> Image:
        """Expand the canvas to ``canvas`` (w, h), the original drawn at ``at`` (x, y), ``size`` (w, h)."""
        return self._run(outpaint_call(image_id, canvas, size, at), {"canvas": canvas, "size": size, "at": at}, **options)

    def retry(self, image_id: int, *, strength: str | None = None, **options: Unpack[EditOptions]) -> Image:
        """Reimagine the image; ``strength`` is strong or subtle."""
        return self._run(retry_call(self._config, image_id, strength), {"strength": strength}, **options)

    def fill(self, image_id: int | Image, mask: MaskSource, prompt: str, negative: str = "", *, resize: bool = False,
             **options: Unpack[EditOptions]) -> Image:
        """Regenerate the masked area from ``prompt`` (mask: PIL image, array, path or PNG bytes, at
        the image's size; ``resize=True`` scales one of another size, which otherwise raises ValueError)."""
        check_edit("fill", _id_of(image_id), {"mask": mask, "prompt": prompt, "negative": negative})
        mask = fitted_mask(mask, self._size(image_id), resize)
        return self._run(fill_call(_id_of(image_id), mask, prompt, negative),
                         {"mask": mask, "prompt": prompt, "negative": negative}, **options)

    def clean_up(self, image_id: int | Image, mask: MaskSource, *, resize: bool = False,
                 **options: Unpack[EditOptions]) -> Image:
        """Remove the masked object (the mask as for ``fill``)."""
        check_edit("cleanUp", _id_of(image_id), {"mask": mask})
        mask = fitted_mask(mask, self._size(image_id), resize)
        return self._run(clean_up_call(_id_of(image_id), mask), {"mask": mask}, **options)

    def remove_bg(self, image_id: int, **options: Unpack[EditOptions]) -> Image:
        """Remove the background."""
        return self._run(_edit(image_id, OPERATION_OF["remove_bg"]), {}, **options)

    def vectorize(self, image_id: int, **options: Unpack[EditOptions]) -> Image:
        """Vectorize; the new image's binary is an SVG with ``type="svg"``."""
        return self._run(_edit(image_id, "vectorize"), {}, **options)

    def upsize(self, image_id: int, **options: Unpack[EditOptions]) -> Image:
        """Upscale."""
        return self._run(_edit(image_id, "upsize"), {}, **options)

    def cancel(self, request_id: str) -> str:
        """Cancel an edit: "cancelled" if it was running or not yet arrived, "not_running" if done."""
        return _cancel_status(self._http.send(cancel_call(request_id)))

    def _size(self, image: int | HasId) -> tuple[int, int] | None:
        return _known_size(image) or parse_resolution(self._client.images.meta(_id_of(image)).resolution)

    def _run(self, call: Call, params: dict[str, Any], request_id: str | None = None,
             timeout: float | None = None) -> Image:
        call, request_id = prepare(self._config, call, request_id, timeout)
        try:
            response = self._http.send(call)
        except APIConnectionError as exc:
            if not exc.may_have_executed:
                raise
            raise exc.for_edit(request_id, self._cancel_quietly(request_id)) from exc
        except KeyboardInterrupt:
            self._cancel_quietly(request_id)
            raise
        image_id, info, charge = _edited(response, self._config, request_id)
        return Image(self._client, image_id, info=info, charge=charge, request_id=request_id,
                     origin=_origin(call, params, image_id, request_id, charge))

    def _cancel_quietly(self, request_id: str) -> str | None:
        try:
            return _cancel_status(self._http.send(cancel_call(request_id, CANCEL_TIMEOUT)))
        except ImagekitError as exc:
            log.warning("could not cancel edit %s: %s", request_id, exc)
            return None


class AsyncEdits(AsyncNamespace):
    """Editing images; each edit returns a handle on the new image (awaitable)."""

    async def enhance(self, image_id: int, scale: str = "2x", **options: Unpack[EditOptions]) -> AsyncImage:
        """Enhance detail and upscale by ``scale`` (2x, 4x or 8x)."""
        return await self._run(enhance_call(self._config, image_id, scale), {"scale": scale}, **options)

    async def outpaint(self, image_id: int, *, canvas: Pair, size: Pair, at: Pair,
                       **options: Unpack[EditOptions]) -> AsyncImage:
        """Expand the canvas to ``canvas`` (w, h), the original drawn at ``at`` (x, y), ``size`` (w, h)."""
        return await self._run(outpaint_call(image_id, canvas, size, at), {"canvas": canvas, "size": size, "at": at},
                               **options)

    async def retry(self, image_id: int, *, strength: str | None = None,
                    **options: Unpack[EditOptions]) -> AsyncImage:
        """Reimagine the image; ``strength`` is strong or subtle."""
        return await self._run(retry_call(self._config, image_id, strength), {"strength": strength}, **options)

    async def fill(self, image_id: int | AsyncImage, mask: MaskSource, prompt: str, negative: str = "", *,
                   resize: bool = False, **options: Unpack[EditOptions]) -> AsyncImage:
        """Regenerate the masked area from ``prompt`` (mask: PIL image, array, path or PNG bytes, at
        the image's size; ``resize=True`` scales one of another size, which otherwise raises ValueError)."""
        check_edit("fill", _id_of(image_id), {"mask": mask, "prompt": prompt, "negative": negative})
        mask = fitted_mask(mask, await self._size(image_id), resize)
        return await self._run(fill_call(_id_of(image_id), mask, prompt, negative),
                               {"mask": mask, "prompt": prompt, "negative": negative}, **options)

    async def clean_up(self, image_id: int | AsyncImage, mask: MaskSource, *, resize: bool = False,
                       **options: Unpack[EditOptions]) -> AsyncImage:
        """Remove the masked object (the mask as for ``fill``)."""
        check_edit("cleanUp", _id_of(image_id), {"mask": mask})
        mask = fitted_mask(mask, await self._size(image_id), resize)
        return await self._run(clean_up_call(_id_of(image_id), mask), {"mask": mask}, **options)

    async def remove_bg(self, image_id: int, **options: Unpack[EditOptions]) -> AsyncImage:
        """Remove the background."""
        return await self._run(_edit(image_id, OPERATION_OF["remove_bg"]), {}, **options)

    async def vectorize(self, image_id: int, **options: Unpack[EditOptions]) -> AsyncImage:
        """Vectorize; the new image's binary is an SVG with ``type="svg"``."""
        return await self._run(_edit(image_id, "vectorize"), {}, **options)

    async def upsize(self, image_id: int, **options: Unpack[EditOptions]) -> AsyncImage:
        """Upscale."""
        return await self._run(_edit(image_id, "upsize"), {}, **options)

    async def cancel(self, request_id: str) -> str:
        """Cancel an edit: "cancelled" if it was running or not yet arrived, "not_running" if done."""
        return _cancel_status(await self._http.send(cancel_call(request_id)))

    async def _size(self, image: int | HasId) -> tuple[int, int] | None:
        return _known_size(image) or parse_resolution((await self._client.images.meta(_id_of(image))).resolution)

    async def _run(self, call: Call, params: dict[str, Any], request_id: str | None = None,
                   timeout: float | None = None) -> AsyncImage:
        call, request_id = prepare(self._config, call, request_id, timeout)
        try:
            response = await self._http.send(call)
        except APIConnectionError as exc:
            if not exc.may_have_executed:
                raise
            raise exc.for_edit(request_id, await self._cancel_quietly(request_id)) from exc
        except (KeyboardInterrupt, _cancelled()):
            # Shielded: the caller's own cancellation must not cancel the cancel.
            import anyio

            with anyio.CancelScope(shield=True):
                await self._cancel_quietly(request_id)
            raise
        image_id, info, charge = _edited(response, self._config, request_id)
        return AsyncImage(self._client, image_id, info=info, charge=charge, request_id=request_id,
                          origin=_origin(call, params, image_id, request_id, charge))

    async def _cancel_quietly(self, request_id: str) -> str | None:
        try:
            return _cancel_status(await self._http.send(cancel_call(request_id, CANCEL_TIMEOUT)))
        except ImagekitError as exc:
            log.warning("could not cancel edit %s: %s", request_id, exc)
            return None
