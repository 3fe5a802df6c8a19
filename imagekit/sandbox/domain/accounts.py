"""Accounts: users on plans, API keys stored hashed, login sessions for the connect.sid cookie."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..interface.errors import SandboxError
from ..store.tables import ApiKey, Enterprise, EnterpriseDownload, LoginSession, Plan, State, User
from .catalog import ENTERPRISE_GRADE

KEY_PREFIX = "iks_"
ADMIN_PREFIX = "iksadmin_"
_PREFIX_LEN = 12
# A well-formed key that matches nothing: compared when the prefix is unknown, so a wrong key
# costs the same time as a right one and timing does not reveal which prefixes exist.
_DUMMY_HASH = hashlib.sha256(b"no such key").hexdigest()


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def issue_key(session: Session, user_id: int, now: datetime, expires_at: datetime | None = None) -> str:
    """Create an API key for a user; only its hash is stored, the key itself is returned once."""
    prefix = secrets.token_hex(_PREFIX_LEN // 2)
    key = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(24)}"
    session.add(ApiKey(user_id=user_id, prefix=prefix, key_hash=_digest(key), created_at=now, expires_at=expires_at))
    return key


def key_prefix(key: str) -> str:
    """The part of an API key stored in clear to find its row ("" for a key of another form)."""
    return key[len(KEY_PREFIX):len(KEY_PREFIX) + _PREFIX_LEN] if key.startswith(KEY_PREFIX) else ""


def key_matches(key: str, key_hash: str | None) -> bool:
    """Whether ``key`` hashes to ``key_hash``, compared in constant time; with no row to compare
    with (None), a dummy hash is compared all the same, so timing does not reveal which prefixes exist."""
    return hmac.compare_digest(_digest(key), key_hash or _DUMMY_HASH) and key_hash is not None


def _kept_secret(session: Session, key: str, make) -> str:
    """A secret of the sandbox itself, made on first use and kept in ``sandbox_state``."""
    row = session.get(State, key)
    if row is None:
        row = State(key=key, value=make())
        session.add(row)
        session.flush()
    return row.value


def sandbox_identity(session: Session) -> str:
    """A stable id of this sandbox's data, made on first start: unlike the port or the demo user's
    key it stays the same across sessions, so a ledger can tell yesterday's account is today's."""
    return _kept_secret(session, "identity", lambda: uuid.uuid4().hex)


def _cookie_secret(session: Session) -> bytes:
    return bytes.fromhex(_kept_secret(session, "cookie_secret", lambda: secrets.token_hex(32)))


def admin_token(session: Session) -> str:
    """The token the ``/sandbox`` controls require (header ``X-Sandbox-Token``) beyond loopback.

    Made by ``imagekit sandbox init`` and shown by ``imagekit sandbox token``; unlike API keys it is
    kept readable, since its owner is whoever can read the data folder anyway."""
    return _kept_secret(session, "admin_token", lambda: ADMIN_PREFIX + secrets.token_urlsafe(24))


def admin_token_matches(expected: str, given: str | None) -> bool:
    return hmac.compare_digest(_digest(expected), _digest(given or ""))


def _sign(secret: bytes, sid: str) -> str:
    mac = hmac.new(secret, sid.encode(), hashlib.sha256).digest()
    return base64.b64encode(mac).decode().rstrip("=")


def open_session(session: Session, user_id: int, now: datetime, ttl: timedelta = timedelta(days=1)) -> str:
    """Log a user in; returns the ``connect.sid`` cookie value (``s:<sid>.<signature>``)."""
    sid = secrets.token_urlsafe(24)
    session.add(LoginSession(sid_hash=_digest(sid), user_id=user_id, expires_at=now + ttl))
    return f"s:{sid}.{_sign(_cookie_secret(session), sid)}"


def cookie_session_id(cookie: str, secret: bytes | None) -> str | None:
    """The stored (hashed) session id of a ``connect.sid`` cookie signed with ``secret``, or None."""
    if secret is None or not cookie.startswith("s:") or "." not in cookie:
        return None
    sid, _, signature = cookie[2:].rpartition(".")
    return _digest(sid) if hmac.compare_digest(_sign(secret, sid), signature) else None


def plan_by_grade(session: Session, grade: str) -> Plan:
    plan = session.scalar(select(Plan).where(Plan.grade == grade))
    if plan is None:
        known = ", ".join(session.scalars(select(Plan.grade).order_by(Plan.plan_id)))
        raise SandboxError("unknown_plan", f"Unknown plan {grade!r}; the plans are {known}.")
    return plan


def add_user(session: Session, email: str, grade: str, now: datetime, name: str | None = None) -> User:
    """A new user on a plan with that plan's opening balances; enterprise grade adds an Enterprise."""
    if "@" not in email or len(email) > 254:
        raise SandboxError("invalid_request", f"Not an e-mail address: {email!r}.")
    if session.scalar(select(User).where(User.email == email)) is not None:
        raise SandboxError("email_taken", f"A user with e-mail {email} exists already.")
    plan = plan_by_grade(session, grade)
    user = User(
        email=email, name=name or email.split("@")[0], customer_key=str(uuid.uuid4()), created_at=now,
        plan=plan, plan_started_at=now, default_credit=plan.default_credit, daily_credit=plan.daily_credit,
        monthly_credit=plan.monthly_credit, max_credit=plan.max_credit, daily_granted_on=now.date(),
        monthly_granted_at=now,
    )
    session.add(user)
    session.flush()
    if grade == ENTERPRISE_GRADE:
        _attach_enterprise(session, user, plan, now)
    return user


def _attach_enterprise(session: Session, user: User, plan: Plan, now: datetime) -> None:
    """A postpaid enterprise account billed monthly, bound to the enterprise model."""
    enterprise = Enterprise(
        user_id=user.user_id, name=f"{user.name} Inc.", categories="design,marketing",
        expires_at=now + timedelta(days=365), monthly_credit=20000, yearly_credit=240000, amount=2000,
        currency="USD", simultaneous_limit=plan.simultaneous_limit, max_edit_number=plan.max_edit_number,
        edit_count_period="month", payment_period="monthly", postpaid=True,
        model_url="imagekit/procedural:enterprise", logo="/static/enterprise-logo.png",
        models=list(plan.models),
    )
    session.add(enterprise)
    user.monthly_credit = enterprise.monthly_credit
    session.add_all(EnterpriseDownload(user_id=user.user_id, scale_size=s, credit=c)
                    for s, c in (("1x", 0), ("2x", 1), ("4x", 2), ("8x", 4)))
