"""``create_app(settings)``: the sandbox's FastAPI app, with one renderer for every error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..interface.errors import SandboxError
from ..interface.extensions import spec_openapi
from ..interface.schemas import ErrorBody
from ..service import Sandbox
from ..settings import SandboxSettings
from ..store.reads import LoopReader
from .callers import Callers
from .deps import with_cookie_scheme
from .image_meta import ImageMeta
from .middleware import (
    BodyLimitMiddleware,
    FaultMiddleware,
    HostCheckMiddleware,
    OutageMiddleware,
    RefreshShared,
    StampArrival,
)
from .routes import control, edits, images, prompts, users
from .views import RenderedViews

_HTTP_NAMES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large",
               415: "unsupported_media_type"}
# A header whose value breaks the interface's rules has its own error name.
_HEADER_ERRORS = {"x-platform": "invalid_platform", "x-api-type": "invalid_api_type",
                  "x-request-id": "invalid_request_id"}

# FastAPI types responses= by its keys as int | str (a status, or "default" or "2XX").
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {status: {"model": ErrorBody, "description": text} for status, text in (
    (400, "Invalid input or Host"), (401, "Wrong or expired API key (admin token for /sandbox)"), (402, "Not enough credit"),
    (403, "Not logged in, or not allowed by the plan"), (404, "Not found"), (409, "Conflict"),
    (413, "Too large"), (415, "Unsupported media type"), (429, "Over a concurrency or rate limit"),
    (503, "Unavailable: the database is unreachable for now, or an injected fault"),
    (507, "The data folder is full: nothing was charged"))}


def error_response(error: SandboxError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


def _validation_error(exc: RequestValidationError) -> SandboxError:
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    loc = [str(part) for part in first.get("loc", ())]
    if first.get("type") == "json_invalid":
        return SandboxError("malformed_json", "The body is not valid JSON.")
    if loc[:1] == ["header"] and len(loc) > 1 and loc[1].lower() in _HEADER_ERRORS:
        return SandboxError(_HEADER_ERRORS[loc[1].lower()], f"{loc[1]}: {first['msg']}")
    where = ".".join(part for part in loc if part != "body") or "request"
    return SandboxError("invalid_request", f"{where}: {first['msg']}")


def create_app(settings: SandboxSettings, sandbox: Sandbox | None = None, *, owner: bool = True) -> FastAPI:
    """A sandbox app over ``settings`` (its own database, files, clock and faults).

    The ``owner`` app claims the data folder and settles an earlier run's unfinished work when it
    starts; the workers of a multi-worker serve are not owners: their parent did both, once."""
    sandbox = sandbox or Sandbox(settings)
    reader = LoopReader(sandbox.db.engine, wait=sandbox.db.wait)  # the event loop's reads: callers, image metadata
    callers = Callers(sandbox, reader)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if owner:
            sandbox.claim()
            sandbox.recover()
        sandbox.gate.start()  # renews this process's slot leases; settles abandoned and expired ones
        yield
        sandbox.gate.stop()
        reader.close()
        sandbox.close()

    app = FastAPI(title="imagekit sandbox", version="1.1", lifespan=lifespan,
                  description="A local implementation of the image generation and editing interface "
                              "(generation is procedural). Error bodies: {success, code, data, message}.",
                  responses=ERROR_RESPONSES)
    app.state.sandbox = sandbox
    app.state.callers = callers
    app.state.image_meta = ImageMeta(reader, tagged=not settings.spec_exact)
    app.state.rendered = RenderedViews()
    app.include_router(users.router)
    app.include_router(edits.router)
    app.include_router(prompts.router)
    app.include_router(images.router)
    if settings.controls:
        app.include_router(control.router)
    full_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:  # built once, on the first request (FastAPI's cache, kept)
            schema = with_cookie_scheme(full_openapi())
            app.openapi_schema = spec_openapi(schema) if settings.spec_exact else schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.exception_handler(SandboxError)
    async def sandbox_error(request: Request, exc: SandboxError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(_validation_error(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Any other refusal from Starlette or FastAPI (a body they cannot parse) is a 400.
        name = _HTTP_NAMES.get(exc.status_code, "invalid_request" if exc.status_code < 500 else "internal_error")
        # Keep the exception's headers: a 405 names the methods that are allowed (Allow).
        return error_response(SandboxError(name, str(exc.detail), headers=dict(exc.headers or {})))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        return error_response(SandboxError("internal_error", "The sandbox failed; see its log."))

    app.add_middleware(StampArrival)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_upload_bytes)
    app.add_middleware(FaultMiddleware, faults=sandbox.faults)
    if sandbox.db.shared:
        app.add_middleware(RefreshShared, callers=callers)
    app.add_middleware(OutageMiddleware)  # around every database read, the caller's included
    app.add_middleware(HostCheckMiddleware, allowed=settings.allowed_hosts)
    return app
