"""GET /api/users/me and its usage, styles and collection count."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool

from ...interface.schemas import StyleOut, UsageOut, UserOut
from ...service import Sandbox
from ...store.tables import Collection, EnterpriseDownload, Style, User
from ..deps import COOKIE_SECURITY, CurrentUser, SandboxDep, SessionCaller
from ..views import RenderedViews, style_view, usage_view, user_view

router = APIRouter(prefix="/api/users/me", tags=["users"])


@router.get("", response_model=None, responses={200: {"model": UserOut}}, openapi_extra=COOKIE_SECURITY)
async def me(request: Request, caller: SessionCaller) -> Response:
    """The caller's profile, plan (with credit costs and price) and enterprise data."""
    sandbox: Sandbox = request.app.state.sandbox
    rendered: RenderedViews = request.app.state.rendered
    user = caller.user
    if user.enterprise is not None:  # its downloads come from a table the caller's row does not cover
        return JSONResponse(await run_in_threadpool(_enterprise_profile, sandbox, rendered, user))
    document = rendered.get(user.user_id, caller.row)
    if document is None:
        view = user_view(user, rendered.plan(user.plan), sandbox.settings.base_size, [])
        document = rendered.put(user.user_id, caller.row, bytes(JSONResponse(view).body))
    return Response(document, media_type="application/json")


def _enterprise_profile(sandbox: Sandbox, rendered: RenderedViews, user: User) -> dict:
    with sandbox.db.read() as session:
        downloads = list(session.scalars(select(EnterpriseDownload).where(EnterpriseDownload.user_id == user.user_id)
                                         .order_by(EnterpriseDownload.enterprise_download_id)))
    return user_view(user, rendered.plan(user.plan), sandbox.settings.base_size, downloads)


@router.get("/usage", response_model=None, responses={200: {"model": UsageOut}})
def usage(sandbox: SandboxDep, user: CurrentUser) -> dict:
    """Balances and this period's counters against the plan's maxima."""
    with sandbox.db.read() as session:
        return usage_view(session, user, sandbox.clock.now())


@router.get("/styles", response_model=None, responses={200: {"model": list[StyleOut]}})
def styles(sandbox: SandboxDep, user: CurrentUser) -> list[dict]:
    """The caller's own styles."""
    with sandbox.db.read() as session:
        rows = session.scalars(select(Style).where(Style.owner_id == user.user_id).order_by(Style.style_id))
        return [style_view(style) for style in rows]


@router.get("/collectionCount", response_model=None, responses={200: {"model": int}})
def collection_count(sandbox: SandboxDep, user: CurrentUser) -> int:
    """How many collections the caller owns."""
    with sandbox.db.read() as session:
        return session.scalar(select(func.count()).select_from(Collection)
                              .where(Collection.owner_id == user.user_id)) or 0
