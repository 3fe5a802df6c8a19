"""POST /api/images/create, GET /api/images/{id} and GET /api/images/{id}/binary."""

from __future__ import annotations

import base64
import logging
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from ...domain import credits, generation
from ...domain.rendering import MEDIA_TYPES, parse_scale
from ...engines.edits.codecs import encode_image
from ...interface.errors import SandboxError
from ...interface.extensions import charge_headers
from ...interface.schemas import CreateBody, CreateOut, ImageMetaOut
from ...service import Sandbox
from ...store.tables import Charge, Collection, DownloadLog, Image, User
from ..binaries import binary_response
from ..deps import ApiTypeHeader, CurrentUser, ImageId, PlatformHeader, SandboxDep
from ..image_meta import ImageMeta, readable_by
from ..views import generated_image_view

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/images", tags=["images"])


@router.post("/create", response_model=None, responses={200: {"model": CreateOut}})
def create(body: CreateBody, request: Request, sandbox: SandboxDep, user: CurrentUser,
           platform: PlatformHeader = "api", api_type: ApiTypeHeader = "standard") -> JSONResponse:
    """Generate 1, 2 or 4 images from a prompt with a style, a reference image or a collection."""
    with sandbox.db.read() as session:
        order = generation.prepare(session, sandbox, user, body, platform, api_type,
                                   request.headers.get("host", ""), request.scope["arrived"])
    with sandbox.db.write() as session:  # the slot and the charge together, or neither
        slot = sandbox.gate.acquire(session, user.user_id, credits.simultaneous_limit(user))
        payer = session.get(User, user.user_id)  # read and locked by the gate, in this session
        assert payer is not None  # the caller was just authenticated, and the sandbox never deletes users
        charge, images = generation.start(session, sandbox, payer, order, slot)
    if body.isAsync:  # the committed rows are the answer: the images are PENDING
        sandbox.executor.submit(generation.draw, sandbox, order, images, slot)
        return _create_response(sandbox, payer, charge, images, order.style)
    drawn = generation.draw(sandbox, order, images, slot)
    full = [refusal for refusal in drawn.refusals if refusal.name == "insufficient_storage"]
    if full and all(image.status == "FAILED" for image in drawn.images):  # nothing stored, all refunded
        raise full[0]
    return _create_response(sandbox, drawn.payer, drawn.charge, drawn.images, order.style)


def _create_response(sandbox: Sandbox, payer: User, charge: Charge, images: list[Image], style) -> JSONResponse:
    views = []
    for image in images:
        inline = ""
        if image.status == "COMPLETED":
            inline = base64.b64encode(encode_image(sandbox.store.read_pixels(image.file_name), "jpeg")).decode()
        views.append(generated_image_view(image, style, inline))
    body = {"images": views, **credits.balances(payer)}
    return JSONResponse(body, headers=charge_headers(sandbox.settings, charge.credits - charge.refunded, credits.total_balance(payer)))


def visible_image(session, user: User, image_id: int, collection: bool = False) -> Image:
    """An image the caller may read: their own, or public; with ``collection`` a collection item."""
    image = session.get(Image, image_id)
    visible = readable_by(image, user)
    if collection:
        item_of = session.get(Collection, image.member_of) if visible and image.member_of else None
        visible = item_of is not None and item_of.owner_id in (None, user.user_id)
    if not visible:
        raise SandboxError("image_not_found", f"No image {image_id}.")
    return image


@router.get("/{id}", response_model=None, responses={200: {"model": ImageMetaOut}})
async def image_meta(id: ImageId, request: Request, user: CurrentUser) -> dict:
    """Metadata of one image."""
    meta: ImageMeta = request.app.state.image_meta
    return meta.document(user, id)


@router.get("/{id}/binary", response_class=Response,
            responses={200: {"content": {t: {} for t in MEDIA_TYPES.values()}, "description": "The image file."}})
def binary(id: ImageId, sandbox: SandboxDep, user: CurrentUser,
           isCollection: Annotated[bool, Query(description="Look the id up among collection images.")] = False,
           watermark: Annotated[bool, Query(description="Draw the watermark (always on for watermarked plans).")] = False,
           scaleSize: Annotated[str | None, Query(pattern=r"^\d{1}x$", description="Scale, 1x to 8x.")] = None,
           type: Annotated[Literal["jpeg", "png", "webp", "svg"] | None, Query(description="File type.")] = None,
           ) -> Response:
    """The image file: png by default (svg for vectorized images), optionally scaled and watermarked."""
    scale = parse_scale(scaleSize)
    with sandbox.db.read() as session:
        image = visible_image(session, user, id, collection=isCollection)
    found = sandbox.renderer.file(image, type, scale, watermark or image.watermarked)
    try:
        _log_download(sandbox, id, user.user_id)
    except BaseException:
        found.close()
        raise
    return binary_response(found)


def _log_download(sandbox: Sandbox, image_id: int, user_id: int) -> None:
    """Record a download; on a full disk reads keep working, unrecorded (the log says so)."""
    try:
        sandbox.disk.ensure()  # the disk's reserve is for settling charged work, not for this log
        with sandbox.db.write() as session:
            session.add(DownloadLog(image_id=image_id, user_id=user_id, created_at=sandbox.clock.now()))
    except SandboxError as exc:
        if exc.name != "insufficient_storage":
            raise
        log.warning("download of image %s by user %s not recorded: %s", image_id, user_id, exc.message)
