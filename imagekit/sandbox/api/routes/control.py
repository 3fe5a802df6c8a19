"""Sandbox-only controls under /sandbox: the clock, fault injection, users, keys, sessions, credits.

They exist so tests, notebooks and benchmarks can exercise grants, periods, failures and accounts;
the real service has none of them. ``SandboxSettings(controls=False)`` turns them off; with
``controls_need_token`` (a server listening beyond loopback) each needs the admin token, and so does
any request that does not come from this machine directly (a proxy's: ``require_admin``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Request
from fastapi.security import APIKeyHeader
from pydantic import Field

from ...domain.accounts import admin_token_matches, issue_key, open_session
from ...domain.clock import iso
from ...domain.faults import FaultConfig
from ...domain.seed import register_user
from ...interface.errors import SandboxError
from ...interface.schemas import Body
from ...store.tables import User
from ..deps import SandboxDep
from ..middleware import asked_directly

admin_scheme = APIKeyHeader(name="X-Sandbox-Token", scheme_name="SandboxToken", auto_error=False,
                            description="The admin token (`imagekit sandbox token`); required beyond loopback.")


def require_admin(request: Request, sandbox: SandboxDep, token: Annotated[str | None, Depends(admin_scheme)]) -> None:
    """Let a control through without the token only when the request itself comes from this machine
    directly (``asked_directly``: loopback, a loopback Host, no forwarding header) to a sandbox
    listening on loopback; anything else (behind a proxy, beyond loopback) needs the admin token."""
    if not sandbox.settings.controls_need_token and asked_directly(
            request.client.host if request.client else None, {k.lower(): v for k, v in request.headers.items()}):
        return
    if not token:
        raise SandboxError("admin_token_required", "Controls need the sandbox's admin token (X-Sandbox-Token) unless "
                                                   "asked from this machine directly: not through a proxy, not beyond loopback.")
    if not admin_token_matches(sandbox.admin_token, token):
        raise SandboxError("wrong_admin_token", "The X-Sandbox-Token header is not this sandbox's admin token.")


router = APIRouter(prefix="/sandbox", tags=["sandbox controls"], dependencies=[Depends(require_admin)])
UserId = Annotated[int, Path(ge=1, le=2**53)]
Rate = Annotated[float, Field(ge=0, le=1)]
Count = Annotated[int, Field(ge=0, le=10**9)]
"""A limit stored as a database integer: bounded well inside 64 bits."""


class AdvanceBody(Body):
    seconds: Annotated[float, Field(ge=0, le=10 * 365 * 86400)]


class FaultBody(Body):
    rate_503: Rate = 0.0
    rate_429: Rate = 0.0
    retry_after: Annotated[float, Field(ge=0, le=3600)] = 1.0
    drop_rate: Rate = 0.0
    drop_phase: Literal["before", "after"] = "before"
    latency: Annotated[float, Field(ge=0, le=60)] = 0.0
    fail_generation_rate: Rate = 0.0
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] | None = None


class NewUserBody(Body):
    email: Annotated[str, Field(min_length=3, max_length=254)]
    plan: Annotated[str, Field(max_length=32)] = "standard"
    name: Annotated[str, Field(min_length=1, max_length=128)] | None = None


class KeyBody(Body):
    expiresInSeconds: Annotated[float, Field(ge=0, le=100 * 365 * 86400)] | None = None


class SessionBody(Body):
    userId: Annotated[int, Field(ge=1, le=2**53)]


class CreditsBody(Body):
    defaultCredit: Annotated[int, Field(ge=-10**9, le=10**9)] | None = None
    dailyCredit: Annotated[int, Field(ge=0, le=10**9)] | None = None
    monthlyCredit: Annotated[int, Field(ge=0, le=10**9)] | None = None


class EnterpriseBody(Body):
    canUseOwnOnly: bool | None = None
    hasSpecialLimits: bool | None = None
    specialLimits: dict[Annotated[str, Field(max_length=32)], Count] | None = None
    editCountPeriod: Literal["day", "month", "plan"] | None = None
    postpaid: bool | None = None
    maxEditNumber: Count | None = None


def _user(session, user_id: int) -> User:
    user = session.get(User, user_id)
    if user is None:
        raise SandboxError("user_not_found", f"No user {user_id}.")
    return user


@router.get("/clock")
def clock(sandbox: SandboxDep) -> dict:
    """The sandbox's current time and how far it was advanced."""
    return {"now": iso(sandbox.clock.now()), "offsetSeconds": sandbox.clock.offset_seconds}


@router.post("/clock/advance")
def advance(body: AdvanceBody, sandbox: SandboxDep) -> dict:
    """Move the clock forward (daily and monthly grants, period counters follow)."""
    sandbox.clock.advance(body.seconds)
    return clock(sandbox)


@router.get("/faults")
def faults(sandbox: SandboxDep) -> dict:
    return sandbox.faults.config.as_dict()


@router.post("/faults")
def set_faults(body: FaultBody, sandbox: SandboxDep) -> dict:
    """Inject faults into /api requests (replaces the previous configuration)."""
    sandbox.faults.set(FaultConfig(**body.model_dump()))
    return faults(sandbox)


@router.delete("/faults")
def clear_faults(sandbox: SandboxDep) -> dict:
    sandbox.faults.set(FaultConfig())
    return faults(sandbox)


@router.post("/users")
def add_user(body: NewUserBody, sandbox: SandboxDep) -> dict:
    """A new user on a plan, with the starter styles; returns its API key (shown only here)."""
    user_id, key = register_user(sandbox, body.email, body.plan, body.name)
    return {"userId": user_id, "apiKey": key}


@router.post("/users/{user_id}/keys")
def add_key(user_id: UserId, body: KeyBody, sandbox: SandboxDep) -> dict:
    """Another API key for a user, optionally expiring after ``expiresInSeconds``."""
    now = sandbox.clock.now()
    expires = now + timedelta(seconds=body.expiresInSeconds) if body.expiresInSeconds is not None else None
    with sandbox.db.write() as session:
        _user(session, user_id)
        return {"apiKey": issue_key(session, user_id, now, expires)}


@router.post("/sessions")
def login(body: SessionBody, sandbox: SandboxDep) -> dict:
    """Log a user in; returns the ``connect.sid`` cookie value."""
    with sandbox.db.write() as session:
        _user(session, body.userId)
        return {"cookie": open_session(session, body.userId, sandbox.clock.now())}


@router.post("/users/{user_id}/credits")
def set_credits(user_id: UserId, body: CreditsBody, sandbox: SandboxDep) -> dict:
    """Set a user's balances (a top-up or a drain, for testing limits)."""
    fields = {"defaultCredit": "default_credit", "dailyCredit": "daily_credit", "monthlyCredit": "monthly_credit"}
    with sandbox.db.write() as session:
        user = _user(session, user_id)
        for name, value in body.model_dump(exclude_none=True).items():
            setattr(user, fields[name], value)
        return {"defaultCredit": user.default_credit, "dailyCredit": user.daily_credit,
                "monthlyCredit": user.monthly_credit}


@router.patch("/users/{user_id}/enterprise")
def set_enterprise(user_id: UserId, body: EnterpriseBody, sandbox: SandboxDep) -> dict:
    """Change an enterprise account's flags and limits."""
    fields = {"canUseOwnOnly": "can_use_own_only", "hasSpecialLimits": "has_special_limits",
              "specialLimits": "special_limits", "editCountPeriod": "edit_count_period",
              "postpaid": "postpaid", "maxEditNumber": "max_edit_number"}
    with sandbox.db.write() as session:
        user = _user(session, user_id)
        if user.enterprise is None:
            raise SandboxError("not_enterprise", f"User {user_id} has no enterprise account.")
        for name, value in body.model_dump(exclude_none=True).items():
            setattr(user.enterprise, fields[name], value)
        return body.model_dump(exclude_none=True)


@router.get("/stats")
def stats(sandbox: SandboxDep) -> dict:
    """Peak concurrency reached per user since start (for tests and benchmarks)."""
    return {"peakConcurrency": {str(k): v for k, v in sandbox.gate.peak.items()}}
