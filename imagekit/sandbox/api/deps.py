"""Request dependencies: the sandbox, the authenticated caller, the platform and API-type headers,
and the path parameters several routers share.

The caller is found by one dependency that is itself the API-key scheme (so ``/openapi.json`` still
declares it): FastAPI's cost per dependency is close to the lookup's own, so the lookup does not
ask for the sandbox, the header and the cookie as dependencies of their own.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Path, Request
from fastapi.security import APIKeyCookie, APIKeyHeader

from ..interface.errors import SandboxError
from ..interface.schemas import REQUEST_ID_PATTERN, ApiType, Platform
from ..service import Sandbox
from ..store.tables import User
from .callers import KEY_READ, Caller, Callers

API_KEY_HEADER = "X-Api-Key"
COOKIE = "connect.sid"


async def get_sandbox(request: Request) -> Sandbox:
    sandbox: Sandbox = request.app.state.sandbox
    return sandbox


SandboxDep = Annotated[Sandbox, Depends(get_sandbox)]


class CallerScheme(APIKeyHeader):
    """The caller by API key or, with ``cookie``, failing that by the ``connect.sid`` login cookie."""

    def __init__(self, *, cookie: bool) -> None:
        super().__init__(name=API_KEY_HEADER, scheme_name="APIKeyHeader", auto_error=False,
                         description="The issued API key.")
        self.cookie = cookie

    async def __call__(self, request: Request) -> Caller:  # type: ignore[override]  # a Caller, not the key
        callers: Callers = request.app.state.callers
        key = request.headers.get(API_KEY_HEADER)
        if key:
            return await callers.by_key(key, request.scope.get(KEY_READ))
        cookie = request.cookies.get(COOKIE) if self.cookie else None
        caller = await callers.by_cookie(cookie) if cookie else None
        if caller is None:
            raise SandboxError("not_logged_in", "Send the X-Api-Key header (or log in).")
        return caller


by_key = CallerScheme(cookie=False)
by_key_or_cookie = CallerScheme(cookie=True)
cookie_scheme = APIKeyCookie(name=COOKIE, auto_error=False,
                             description="Login session (accepted on GET /api/users/me only).")
COOKIE_SECURITY: dict[str, Any] = {"security": [{cookie_scheme.scheme_name: []}]}
"""``openapi_extra`` of a route taking ``by_key_or_cookie``: the cookie as the key's alternative.

``by_key_or_cookie`` reads the cookie itself; declared as a dependency of its own it would cost each
request one more resolution, so it is declared in the document instead (see ``with_cookie_scheme``)."""


def with_cookie_scheme(schema: dict[str, Any]) -> dict[str, Any]:
    """``/openapi.json`` with the cookie scheme among its security schemes."""
    schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
    schemes[cookie_scheme.scheme_name] = cookie_scheme.model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return schema


async def current_user(caller: Annotated[Caller, Depends(by_key)]) -> User:
    return caller.user


CurrentUser = Annotated[User, Depends(current_user)]
SessionCaller = Annotated[Caller, Depends(by_key_or_cookie)]
PlatformHeader = Annotated[Platform, Header(alias="X-Platform", description="Platform tag.")]
ApiTypeHeader = Annotated[ApiType, Header(alias="X-Api-Type", description="API type: standard or enterprise.")]
RequestIdHeader = Annotated[str | None, Header(alias="X-Request-Id", max_length=64, pattern=REQUEST_ID_PATTERN,
                                               description="Request id, used to cancel an edit.")]
ImageId = Annotated[int, Path(ge=1, le=2**53, description="Image id.")]
