"""POST /api/images/textToPrompt and /api/images/imageToPrompt."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from ...domain import credits
from ...domain.generation import find_style
from ...domain.references import read_reference
from ...engines.captions import caption, parse_accept_language
from ...engines.prompts import enhance_prompt
from ...interface.errors import SandboxError
from ...interface.extensions import charge_headers
from ...interface.schemas import Body, Id, Text
from ...service import Sandbox
from ...store.tables import PromptLog, User
from ..deps import CurrentUser, PlatformHeader, SandboxDep

router = APIRouter(prefix="/api/images", tags=["prompts"])


class TextToPromptBody(Body):
    text: Annotated[Text, Field(min_length=1, max_length=1200)]
    styleId: Id | None = None


class TextToPromptOut(BaseModel):
    initialPrompt: str
    enhancedPrompt: str
    ttpLogId: int


class ImageToPromptBody(Body):
    image: Annotated[str, Field(min_length=1, description="/api/images/<id>/binary of your image, or a data: URL.")]


class ImageToPromptOut(BaseModel):
    captionPrompt: str
    captionTPrompt: str


def _charge(sandbox: Sandbox, user: User, kind: str, session) -> tuple[int, int]:
    sandbox.disk.ensure()  # the disk's reserve is for settling failures, not for new work
    fresh = sandbox.db.locked_one(session, User, user.user_id)
    charged = credits.charge(session, fresh, kind, credits.price(user, kind), sandbox.clock.now()).credits
    return charged, credits.total_balance(fresh)


@router.post("/textToPrompt", response_model=None, responses={200: {"model": TextToPromptOut}})
def text_to_prompt(body: TextToPromptBody, sandbox: SandboxDep, user: CurrentUser,
                   platform: PlatformHeader = "api") -> JSONResponse:
    """Expand a text into an enhanced prompt, in the chosen style's vocabulary."""
    if not body.text.strip():
        raise SandboxError("invalid_request", "text: the text is empty.")
    style = None
    if body.styleId is not None:
        with sandbox.db.read() as session:
            style = find_style(session, user, body.styleId, platform)
    try:
        enhanced = enhance_prompt(body.text, style.look if style else None, style.main_text if style else None)
    except ValueError as exc:  # the enhancer finds nothing to work with (e.g. only control characters)
        raise SandboxError("invalid_request", f"text: {exc}.") from None
    now = sandbox.clock.now()
    with sandbox.db.write() as session:
        sandbox.db.locked(session, User, user.user_id)  # count and charge as one step in every worker
        used, cap = credits.prompt_count(session, user, now), user.plan.max_prompt_number
        if used >= cap:
            raise SandboxError("prompt_limit_exceeded", f"{used} of {cap} prompts used this {user.plan.period}.")
        charged, balance = _charge(sandbox, user, "textToPrompt", session)
        log = PromptLog(user_id=user.user_id, created_at=now, style_id=body.styleId,
                        initial_prompt=body.text, enhanced_prompt=enhanced)
        session.add(log)
        session.flush()
        result = {"initialPrompt": body.text, "enhancedPrompt": enhanced, "ttpLogId": log.ttp_log_id}
    return JSONResponse(result, headers=charge_headers(sandbox.settings, charged, balance))


@router.post("/imageToPrompt", response_model=None, responses={200: {"model": ImageToPromptOut}})
def image_to_prompt(body: ImageToPromptBody, request: Request, sandbox: SandboxDep, user: CurrentUser,
                    platform: PlatformHeader = "api",
                    accept_language: Annotated[str | None, Header(alias="Accept-Language")] = None) -> JSONResponse:
    """Caption prompts read from the image's content: English, and in the Accept-Language (en or ko)."""
    with sandbox.db.read() as session:
        pixels, _ = read_reference(session, user, body.image, sandbox.store, request.headers.get("host", ""),
                                   sandbox.settings.max_upload_bytes, sandbox.settings.max_upload_pixels)
    words = caption(pixels, parse_accept_language(accept_language))
    with sandbox.db.write() as session:
        charged, balance = _charge(sandbox, user, "imageToPrompt", session)
    return JSONResponse({"captionPrompt": words.caption_prompt, "captionTPrompt": words.caption_t_prompt},
                        headers=charge_headers(sandbox.settings, charged, balance))
