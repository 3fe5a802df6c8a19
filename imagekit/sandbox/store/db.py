"""Database engine, sessions, and what makes read-check-update atomic: an in-process write lock
(SQLite has one writer anyway) and, on a database several processes share, row locks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

from ..._db_watch import cut_after, unwatch, watch
from .datadir import DataDirError
from .tables import Base

Row = TypeVar("Row", bound=Base)


def normalize_url(url: str) -> str:
    """``postgresql://`` (and ``postgres://``) mean psycopg 3, the driver imagekit ships; any other
    URL is used as given."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return url


WAIT_SECONDS = 30.0
"""The longest one statement, commit or connection check may wait on a PostgreSQL server: then it
fails as an outage (a 503 before anything was charged; see outage.py), however the server went
silent: a refused connection, a network dropping packets, a lock held elsewhere, or a frozen server."""


def make_engine(url: str, wait: float = WAIT_SECONDS) -> Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and foreign keys; PostgreSQL waits of
    at most ``wait`` seconds each."""
    if not url.startswith("sqlite"):
        # Requests run on up to 40 threads, jobs on 16 more: enough connections that none waits long.
        postgres = make_url(url).get_backend_name() == "postgresql"
        engine = create_engine(normalize_url(url), pool_pre_ping=True, pool_size=10, max_overflow=50,
                               connect_args=_bounded_waits(url, wait) if postgres else {})
        if postgres:
            _cut_when_silent(engine, wait)
        return engine
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record) -> None:
        # pysqlite runs SELECTs outside any transaction, so two reads of one request could see two
        # different states (a charge before a refund, its image after). Let SQLAlchemy's own BEGIN
        # (below) open real transactions: each session then reads one consistent snapshot.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


def _bounded_waits(url: str, wait: float) -> dict[str, object]:
    """psycopg's connection options: a host that does not answer is given up after 5 s; a peer gone
    without a word (a network down) is noticed by the keepalives; a slow statement or a lock held
    elsewhere ends at the server's timeouts (the URL's own ``options`` kept)."""
    bound = int(wait * 1000)
    given = make_url(url).query.get("options")
    options = f"{given if isinstance(given, str) else ''} -c statement_timeout={bound} -c lock_timeout={bound}"
    return {"connect_timeout": 5, "keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2,
            "keepalives_count": 3, "tcp_user_timeout": bound, "options": options.strip()}


def _cut_when_silent(engine: Engine, wait: float) -> None:
    """Every statement, commit, rollback and connection check of ``engine`` cut after ``wait`` seconds
    of waiting: a frozen server (a stopped VM, a failover) has its kernel acknowledge every packet,
    so only the client ends that wait (``imagekit._db_watch``)."""
    def raw(connection) -> object:
        return connection.connection.dbapi_connection

    @event.listens_for(engine, "before_cursor_execute")
    def _sent(connection, *_args) -> None:
        watch(raw(connection), wait)

    @event.listens_for(engine, "after_cursor_execute")
    def _answered(connection, *_args) -> None:
        unwatch(raw(connection))

    @event.listens_for(engine, "handle_error")
    def _failed(context) -> None:
        try:
            unwatch(raw(context.connection))
        except Exception:  # noqa: BLE001  (a connection already gone: nothing is watched on it)
            pass

    dialect = engine.dialect
    for name in ("do_commit", "do_rollback", "do_ping"):  # calls on the DB-API connection itself
        setattr(dialect, name, _watched(getattr(dialect, name), wait))


def _watched(call: Callable, wait: float) -> Callable:
    """``call(dbapi_connection, ...)`` cut after ``wait`` seconds of waiting."""
    def bounded(dbapi_connection, *args):
        with cut_after(dbapi_connection, wait):
            return call(dbapi_connection, *args)
    return bounded


class Database:
    """Sessions for one sandbox; ``write()`` serialises writers so read-check-update is atomic."""

    def __init__(self, url: str, guard: Callable[[], AbstractContextManager[None]] = nullcontext,
                 wait: float = WAIT_SECONDS) -> None:
        """``guard`` wraps every write (``DiskSpace.writing``: a full disk becomes 507, its reserve
        freed); ``wait``: the longest one call may wait on a PostgreSQL server (``make_engine``)."""
        self.engine = make_engine(url, wait)
        self.wait = wait
        """The longest one call may wait on a PostgreSQL server."""
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # SQLite allows one writer at a time anyway; taking the lock in-process first turns
        # "read balance, check, update" into one atomic step and avoids SQLITE_BUSY upgrades.
        self._write_lock = threading.RLock()
        self._guard = guard

    @property
    def shared(self) -> bool:
        """Whether other processes may use this database at once (anything but SQLite here)."""
        return self.engine.dialect.name != "sqlite"

    def check_integrity(self) -> None:
        """Raise :class:`DataDirError` when SQLite finds the database damaged (a no-op elsewhere)."""
        if self.engine.dialect.name != "sqlite":
            return
        with self.engine.connect() as connection:
            found = [row[0] for row in connection.exec_driver_sql("PRAGMA quick_check")]
        if found != ["ok"]:
            raise DataDirError(f"the database is damaged ({found[0] if found else 'quick_check failed'})")

    @contextmanager
    def read(self) -> Iterator[Session]:
        with self._sessions() as session:
            yield session

    @contextmanager
    def write(self, guarded: bool = True) -> Iterator[Session]:
        """A session whose changes commit together on success and roll back on any error. Unguarded,
        a failure for lack of space is raised as it is: bookkeeping that can wait for room must not
        spend the reserve kept for settling work."""
        with self._guard() if guarded else nullcontext(), self._write_lock, self._sessions() as session, \
                session.begin():
            yield session

    @staticmethod
    def locked(session: Session, table: type[Row], key: object) -> Row | None:
        """The row ``key`` of ``table``, freshly read and locked until the session commits
        (``SELECT ... FOR UPDATE``): every process that changes it in step waits its turn. On
        SQLite the write lock above already serialises writers, and FOR UPDATE is left out."""
        return session.get(table, key, with_for_update={"of": table}, populate_existing=True)

    @staticmethod
    def locked_one(session: Session, table: type[Row], key: object) -> Row:
        """``locked`` for a row that is never deleted (a user, a charge): NoResultFound if it is missing."""
        return session.get_one(table, key, with_for_update={"of": table}, populate_existing=True)

    def dispose(self) -> None:
        self.engine.dispose()
