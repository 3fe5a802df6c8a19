"""The eight edits and cancelEdit: thin handlers that describe an ``Edit`` and run it as a job."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, File, Form, Path, UploadFile
from fastapi.responses import JSONResponse
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from ...domain.editing import Edit, EditResult, edit_result_view, run_edit
from ...domain.references import ready_image
from ...engines import edits as engines
from ...engines.base import GenerationRequest
from ...interface.errors import SandboxError
from ...interface.extensions import charge_headers
from ...interface.schemas import REQUEST_ID_PATTERN, Body, EditOut, ScaleSize
from ...service import Sandbox
from ..deps import CurrentUser, ImageId, PlatformHeader, RequestIdHeader, SandboxDep

router = APIRouter(prefix="/api/images", tags=["edits"])
_EDIT: dict[str, Any] = {"response_model": None, "responses": {200: {"model": EditOut}}}
Pair = Annotated[list[Annotated[float, Field(ge=-65536, le=65536)]], Field(min_length=2, max_length=2)]


class EnhanceBody(Body):
    imageId: int | None = None
    resolution: str | None = None
    scaleSize: ScaleSize = "2x"
    ownerId: int | None = None
    EditInfo: dict | None = None


class OutpaintBody(Body):
    canvasSize: Pair
    originalImageSize: Pair
    originalImageLocation: Pair


class RetryBody(Body):
    strength: Literal["strong", "subtle"] = "strong"


def _rgb(pixels: np.ndarray) -> np.ndarray:
    """Edits work on RGB; a transparent source (a removed background) is flattened onto white."""
    if pixels.shape[2] == 3:
        return pixels
    alpha = pixels[..., 3:4].astype(np.uint16)
    return ((pixels[..., :3] * alpha + 255 * (255 - alpha) + 127) // 255).astype(np.uint8)


def _pixels_only(fn):
    return lambda pixels, seed, check: EditResult(fn(_rgb(pixels), seed, check))


def _respond(sandbox: Sandbox, user, image_id, edit, request_id, platform) -> JSONResponse:
    outcome = run_edit(sandbox, user, image_id, edit, request_id, platform)
    headers = {**charge_headers(sandbox.settings, outcome.charged, outcome.balance), "X-Request-Id": outcome.image.request_id}
    return JSONResponse(edit_result_view(outcome.image, sandbox.settings), headers=headers)


def _source_size(sandbox: Sandbox, user, image_id) -> tuple[int, int]:
    with sandbox.db.read() as session:
        source = ready_image(session, user, image_id)
        return source.width, source.height


async def _mask(sandbox: Sandbox, user, image_id: int, upload: UploadFile) -> np.ndarray:
    """The uploaded mask at the image's size, decoded and checked before anything is charged."""
    limit = sandbox.settings.max_upload_bytes
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise SandboxError("payload_too_large", f"The mask is over {limit} bytes.")
    if not data:
        raise SandboxError("invalid_mask", "The mask file is empty.")
    size = _source_size(sandbox, user, image_id)
    try:
        return await run_in_threadpool(engines.decode_mask, data, size, max_bytes=limit,
                                       max_pixels=sandbox.settings.max_upload_pixels)
    except SandboxError as exc:
        if exc.name == "invalid_image":
            raise SandboxError("invalid_mask", f"The mask: {exc.message}.") from None
        raise


@router.post("/{id}/enhance", **_EDIT)
def enhance(id: ImageId, sandbox: SandboxDep, user: CurrentUser, body: EnhanceBody | None = None,
            platform: PlatformHeader = "api", request_id: RequestIdHeader = None) -> JSONResponse:
    """Enhance detail, then upscale 2x, 4x or 8x."""
    body = body or EnhanceBody()
    if body.imageId is not None and body.imageId != id:
        raise SandboxError("invalid_request", f"imageId {body.imageId} in the body differs from {id} in the path.")
    factor = int(body.scaleSize[0])
    if factor == 1:
        raise SandboxError("invalid_request", "scaleSize 1x denotes the original image; enhance takes 2x, 4x or 8x.")
    width, height = _source_size(sandbox, user, id)
    edit = Edit("enhance", f"enhance-{body.scaleSize}", _pixels_only(lambda p, s, c: engines.enhance(p, factor, c)),
                scale_size=body.scaleSize, params={"scaleSize": body.scaleSize},
                out_size=(width * factor, height * factor), keeps_subject=True)
    return _respond(sandbox, user, id, edit, request_id, platform)


@router.post("/{id}/outpaint", **_EDIT)
def outpaint(id: ImageId, body: OutpaintBody, sandbox: SandboxDep, user: CurrentUser,
             platform: PlatformHeader = "api", request_id: RequestIdHeader = None) -> JSONResponse:
    """Expand the canvas: the original, resized, sits where asked; the rest is filled."""
    canvas, size, at = engines.validate_outpaint(body.canvasSize, body.originalImageSize, body.originalImageLocation)
    if min(canvas) < 100:
        raise SandboxError("invalid_outpaint",
                           "canvasSize sides must be at least 100 px (resolutions have 3 or 4 digits).")
    edit = Edit("outpaint", "outpaint",
                _pixels_only(lambda p, seed, c: engines.outpaint(p, canvas, size, at, seed, c)),
                params=body.model_dump(), out_size=canvas)
    return _respond(sandbox, user, id, edit, request_id, platform)


@router.post("/{id}/retry", **_EDIT)
def retry(id: ImageId, sandbox: SandboxDep, user: CurrentUser, body: RetryBody | None = None,
          platform: PlatformHeader = "api", request_id: RequestIdHeader = None) -> JSONResponse:
    """Reimagine: a new variation of the image; ``strength`` strong or subtle."""
    strength = (body or RetryBody()).strength
    edit = Edit("retry", "retry", _pixels_only(lambda p, seed, c: engines.reimagine(p, strength, seed, c)),
                params={"strength": strength})
    return _respond(sandbox, user, id, edit, request_id, platform)


@router.post("/{id}/fill", **_EDIT)
async def fill(id: ImageId, sandbox: SandboxDep, user: CurrentUser, mask: Annotated[UploadFile, File()],
               prompt: Annotated[str, Form(min_length=1, max_length=1200)],
               negative: Annotated[str, Form(max_length=1200)] = "",
               platform: PlatformHeader = "api", request_id: RequestIdHeader = None) -> JSONResponse:
    """Generative fill: the masked area is replaced with content drawn from the prompt."""
    region = await _mask(sandbox, user, id, mask)

    def work(pixels, seed, check):
        pixels = _rgb(pixels)
        height, width = pixels.shape[:2]
        content = sandbox.engine.generate(GenerationRequest(prompt=prompt, width=width, height=height, seed=seed,
                                                            reference=pixels, negative_prompt=negative), check)
        return EditResult(engines.fill(pixels, region, content, check))

    edit = Edit("fill", "fill", work, prompt=prompt, params={"prompt": prompt, "negative": negative})
    return await run_in_threadpool(_respond, sandbox, user, id, edit, request_id, platform)


@router.post("/{id}/cleanUp", **_EDIT)
async def clean_up(id: ImageId, sandbox: SandboxDep, user: CurrentUser, mask: Annotated[UploadFile, File()],
                   platform: PlatformHeader = "api", request_id: RequestIdHeader = None) -> JSONResponse:
    """Object removal: the masked object is inpainted away."""
    region = await _mask(sandbox, user, id, mask)
    edit = Edit("cleanUp", "cleanUp", _pixels_only(lambda p, seed, c: engines.clean_up(p, region, c)))
    return await run_in_threadpool(_respond, sandbox, user, id, edit, request_id, platform)


@router.post("/{id}/removeBg", **_EDIT)
def remove_bg(id: ImageId, sandbox: SandboxDep, user: CurrentUser, platform: PlatformHeader = "api",
              request_id: RequestIdHeader = None) -> JSONResponse:
    """Background removal: a PNG whose background is transparent."""
    edit = Edit("removeBg", "removeBg", lambda p, seed, c: EditResult(engines.remove_background(_rgb(p), c)),
                with_subject=lambda p, subject, c: EditResult(engines.remove_background(_rgb(p), c, subject)))
    return _respond(sandbox, user, id, edit, request_id, platform)


@router.post("/{id}/vectorize", **_EDIT)
def vectorize(id: ImageId, sandbox: SandboxDep, user: CurrentUser, platform: PlatformHeader = "api",
              request_id: RequestIdHeader = None) -> JSONResponse:
    """Vectorize to SVG (the binary endpoint serves it with type=svg, its default)."""
    def work(pixels, seed, check):
        vector = engines.vectorize(_rgb(pixels), check)
        return EditResult(vector.preview, svg=vector.svg)

    return _respond(sandbox, user, id, Edit("vectorize", "vectorize", work), request_id, platform)


@router.post("/{id}/upsize", **_EDIT)
def upsize(id: ImageId, sandbox: SandboxDep, user: CurrentUser, platform: PlatformHeader = "api",
           request_id: RequestIdHeader = None) -> JSONResponse:
    """Upscale 2x."""
    width, height = _source_size(sandbox, user, id)
    edit = Edit("upsize", "upsize", _pixels_only(lambda p, s, c: engines.upsize(p, c)), scale_size="2x",
                out_size=(width * 2, height * 2), keeps_subject=True)
    return _respond(sandbox, user, id, edit, request_id, platform)


@router.post("/cancelEdit/{requestId}", response_model=None, responses={200: {"model": str}})
def cancel_edit(requestId: Annotated[str, Path(max_length=64, pattern=REQUEST_ID_PATTERN)], sandbox: SandboxDep,
                user: CurrentUser) -> str:
    """Cancel an edit by request id: "cancelled", or "not_running" once it finished (nothing happens)."""
    return sandbox.jobs.cancel(user.user_id, requestId)

