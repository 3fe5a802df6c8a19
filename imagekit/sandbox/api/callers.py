"""Who is calling: an API key or a ``connect.sid`` cookie resolved to the caller in one query.

Every request reads the caller's row afresh (balances, grants and the enterprise's flags change, in
this process or another), joined with the key or login session that names it: one indexed read, so
a key removed or expired by anyone is refused on the next request. The read runs on the event loop
(see :mod:`.reads`). What cannot change while the sandbox runs is kept: plans
(``Sandbox.plan``), models, and the cookie secret once made.

On a database several workers share, each request also reads what another worker may have changed
(``SHARED_STATE``: clock, faults) before anything else, faults included, runs. With an API key that
read also finds the key's owner, in the same statement (``refresh_shared``): one round trip per
request, not two. The caller is then as of the request's arrival, as the clock and faults are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm.attributes import set_committed_value
from starlette.concurrency import run_in_threadpool

from ..domain import credits
from ..domain.accounts import cookie_session_id, key_matches, key_prefix
from ..interface.errors import SandboxError
from ..service import SHARED_STATE, Sandbox
from ..store.reads import LoopReader, PreparedRead, detached
from ..store.tables import ApiKey, Enterprise, LoginSession, Model, State, User, enterprise_models

_USERS, _ENTERPRISES, _KEYS, _LOGINS = User.__table__, Enterprise.__table__, ApiKey.__table__, LoginSession.__table__
_USER_FIELDS = tuple(column.key for column in _USERS.columns)
_ENTERPRISE_FIELDS = tuple(column.key for column in _ENTERPRISES.columns)
_CALLER = (*_USERS.columns, *(column.label(f"enterprise_{column.key}") for column in _ENTERPRISES.columns))
_WITH_ENTERPRISE = _USERS.outerjoin(_ENTERPRISES, _ENTERPRISES.c.user_id == _USERS.c.user_id)
_KEY_OWNER = _KEYS.join(_WITH_ENTERPRISE, _USERS.c.user_id == _KEYS.c.user_id)
_BY_KEY = select(_KEYS.c.key_hash, _KEYS.c.expires_at, *_CALLER).select_from(_KEY_OWNER).where(
    _KEYS.c.prefix == bindparam("prefix"))
_SHARED = SHARED_STATE.subquery("shared")
_SHARED_AND_KEY = select(*_SHARED.c, *_BY_KEY.selected_columns).select_from(
    _SHARED.outerjoin(_KEY_OWNER, _KEYS.c.prefix == bindparam("prefix")))
"""One row whatever the key: the shared state, and the key's columns (NULL when no key has the prefix)."""
_BY_LOGIN = (select(_LOGINS.c.expires_at, *_CALLER)
             .select_from(_LOGINS.join(_WITH_ENTERPRISE, _USERS.c.user_id == _LOGINS.c.user_id))
             .where(_LOGINS.c.sid_hash == bindparam("sid_hash")))
_BY_ID = select(*_CALLER).select_from(_WITH_ENTERPRISE).where(_USERS.c.user_id == bindparam("user_id"))
_COOKIE_SECRET = select(State.__table__.c.value).where(State.__table__.c.key == "cookie_secret")


@dataclass(frozen=True)
class Caller:
    """The authenticated caller: ``user`` (detached, plan and enterprise attached) and ``row``, the
    values it was built from, which tell whether anything shown about the caller changed."""

    user: User
    row: tuple[Any, ...]


@dataclass(frozen=True)
class KeyRead:
    """What ``_BY_KEY`` gives for ``key`` (None: no such key), read ahead of the request's handler."""

    key: str
    row: tuple[Any, ...] | None


KEY_READ = "imagekit.key_read"
"""The ASGI scope entry holding the request's :class:`KeyRead`, if it was read ahead."""


class Callers:
    """Authentication for one app: ``by_key``, ``by_cookie``, reading through the app's ``reader``."""

    def __init__(self, sandbox: Sandbox, reader: LoopReader) -> None:
        self._sandbox = sandbox
        engine = sandbox.db.engine
        self._reader = reader
        self._by_key = PreparedRead(_BY_KEY, engine)
        self._shared = PreparedRead(SHARED_STATE, engine)
        self._shared_and_key = PreparedRead(_SHARED_AND_KEY, engine)
        self._by_login = PreparedRead(_BY_LOGIN, engine)
        self._by_id = PreparedRead(_BY_ID, engine)
        self._cookie_secret_read = PreparedRead(_COOKIE_SECRET, engine)
        self._cookie_secret: bytes | None = None
        self._models: dict[int, Model] | None = None
        self._models_of: dict[int, list[Model]] = {}

    def refresh_shared(self, key: str | None) -> KeyRead | None:
        """Load the shared state into the sandbox (see ``Sandbox.load_shared``); with an API ``key``,
        read its owner in the same statement and return it for ``by_key``."""
        prefix = key_prefix(key) if key else ""
        if key is None or not prefix:
            clock, faults = self._reader.first(self._shared) or (None, None)
            self._sandbox.load_shared(clock, faults)
            return None
        row = self._reader.first(self._shared_and_key, prefix=prefix)
        assert row is not None, "the outer join from the one-row shared state gives one row"
        self._sandbox.load_shared(row[0], row[1])
        return KeyRead(key, row[2:] if row[2] is not None else None)

    async def by_key(self, key: str, ahead: KeyRead | None = None) -> Caller:
        """The owner of API key ``key`` (read ``ahead`` or now); 401 wrong_api_key or api_key_expired
        otherwise."""
        prefix = key_prefix(key)
        if ahead is not None and ahead.key == key:
            row = ahead.row
        else:
            row = self._reader.first(self._by_key, prefix=prefix) if prefix else None
        if not key_matches(key, row[0] if row is not None else None) or row is None:
            raise SandboxError("wrong_api_key", "The API key is invalid.")
        if row[1] is not None and row[1] <= self._sandbox.clock.now():
            raise SandboxError("api_key_expired", "The API key has expired.")
        return await self._caller(row[2:])

    async def by_cookie(self, cookie: str) -> Caller | None:
        """The user of a signed, unexpired ``connect.sid`` cookie, or None."""
        sid_hash = cookie_session_id(cookie, self._secret())
        row = self._reader.first(self._by_login, sid_hash=sid_hash) if sid_hash else None
        if row is None or row[0] <= self._sandbox.clock.now():
            return None
        return await self._caller(row[1:])

    async def _caller(self, row: tuple[Any, ...]) -> Caller:
        """The caller of ``row``, after the grants that fell due (given in a worker thread: a write)."""
        user = self._user(row)
        if credits.grants_due(user, self._sandbox.clock.now()):
            await run_in_threadpool(self._apply_grants, user.user_id)
            row = self._reader.first(self._by_id, user_id=user.user_id) or row
            user = self._user(row)
        return Caller(user, row)

    def _apply_grants(self, user_id: int) -> None:
        with self._sandbox.db.write() as writer:
            # Locked: another worker's charge between this read and write would otherwise be undone.
            user = self._sandbox.db.locked(writer, User, user_id)
            if user is not None:  # removed meanwhile: the re-read finds nothing new either
                credits.apply_grants(user, self._sandbox.clock.now())

    def _user(self, row: tuple[Any, ...]) -> User:
        split = len(_USER_FIELDS)
        user = detached(User, _USER_FIELDS, row[:split])
        set_committed_value(user, "plan", self._sandbox.plan(user.plan_id))
        enterprise = None
        if row[split] is not None:
            enterprise = detached(Enterprise, _ENTERPRISE_FIELDS, row[split:])
            set_committed_value(enterprise, "models", self._enterprise_models(enterprise.enterprise_id))
        set_committed_value(user, "enterprise", enterprise)
        return user

    def _enterprise_models(self, enterprise_id: int) -> list[Model]:
        """The models bound to an enterprise account (bound when it is made, never changed)."""
        if enterprise_id not in self._models_of:
            with self._sandbox.db.read() as session:
                if self._models is None:
                    self._models = {model.model_id: model for model in session.scalars(select(Model))}
                bound = session.scalars(select(enterprise_models.c.model_id).where(
                    enterprise_models.c.enterprise_id == enterprise_id).order_by(enterprise_models.c.model_id))
                self._models_of[enterprise_id] = [self._models[model_id] for model_id in bound]
        return self._models_of[enterprise_id]

    def _secret(self) -> bytes | None:
        """The cookie secret; none until the first login made it (then kept: it never changes)."""
        if self._cookie_secret is None:
            row = self._reader.first(self._cookie_secret_read)
            self._cookie_secret = bytes.fromhex(row[0]) if row else None
        return self._cookie_secret
