"""Request dependencies: the sandbox, the authenticated caller, the platform and API-type headers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import APIKeyCookie, APIKeyHeader
from sqlalchemy.orm import lazyload, selectinload
from sqlalchemy.orm.attributes import set_committed_value

from . import credits
from .accounts import authenticate_cookie, authenticate_key
from .errors import SandboxError
from .schemas import REQUEST_ID_PATTERN, ApiType, Platform
from .service import Sandbox
from .tables import Enterprise, User

api_key_scheme = APIKeyHeader(name="X-Api-Key", auto_error=False, description="The issued API key.")
cookie_scheme = APIKeyCookie(name="connect.sid", auto_error=False,
                             description="Login session (accepted on GET /api/users/me only).")


async def get_sandbox(request: Request) -> Sandbox:
    return request.app.state.sandbox


SandboxDep = Annotated[Sandbox, Depends(get_sandbox)]

# The plan comes from the sandbox's cache (plans never change while it runs), not from a join.
_USER_OPTIONS = (lazyload(User.plan), selectinload(User.enterprise).selectinload(Enterprise.models))


def _authenticate(sandbox: Sandbox, key: str | None, cookie: str | None) -> User:
    """The caller with enterprise and (cached) plan attached; due grants applied first.

    Each step holds one database connection and lets it go before the next: a request that held a
    read connection while waiting for a write one could, in a burst, exhaust the pool."""
    now = sandbox.clock.now()
    with sandbox.db.read() as session:
        if key:
            user_id = authenticate_key(session, key, now)
        else:
            user_id = authenticate_cookie(session, cookie, now) if cookie else None
        if user_id is None:
            raise SandboxError(403, "not_logged_in", "Send the X-Api-Key header (or log in).")
        user = session.get(User, user_id, options=_USER_OPTIONS)
        due = credits.grants_due(user, now)
    if due:
        with sandbox.db.write() as writer:
            # Locked: another worker's charge between this read and write would otherwise be undone.
            credits.apply_grants(sandbox.db.locked(writer, User, user_id), sandbox.clock.now())
        with sandbox.db.read() as session:
            user = session.get(User, user_id, options=_USER_OPTIONS)
    set_committed_value(user, "plan", sandbox.plan(user.plan_id))
    return user


def current_user(sandbox: SandboxDep, key: Annotated[str | None, Depends(api_key_scheme)]) -> User:
    """The caller by API key (every /api endpoint)."""
    return _authenticate(sandbox, key, None)


def current_user_or_session(sandbox: SandboxDep, key: Annotated[str | None, Depends(api_key_scheme)],
                            cookie: Annotated[str | None, Depends(cookie_scheme)]) -> User:
    """The caller by API key or, failing that, by the connect.sid login cookie."""
    return _authenticate(sandbox, key, cookie)


CurrentUser = Annotated[User, Depends(current_user)]
SessionUser = Annotated[User, Depends(current_user_or_session)]
PlatformHeader = Annotated[Platform, Header(alias="X-Platform", description="Platform tag.")]
ApiTypeHeader = Annotated[ApiType, Header(alias="X-Api-Type", description="API type: standard or enterprise.")]
RequestIdHeader = Annotated[str | None, Header(alias="X-Request-Id", max_length=64, pattern=REQUEST_ID_PATTERN,
                                               description="Request id, used to cancel an edit.")]
