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


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and foreign keys."""
    if not url.startswith("sqlite"):
        # Requests run on up to 40 threads, jobs on 16 more: enough connections that none waits long.
        # A database that does not answer (a host gone, not a server restarting) is given up after
        # a few seconds, so the request is answered 503 rather than hanging (see outage.py).
        timeout = {"connect_timeout": 5} if make_url(url).get_backend_name() == "postgresql" else {}
        return create_engine(normalize_url(url), pool_pre_ping=True, pool_size=10, max_overflow=50,
                             connect_args=timeout)
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


class Database:
    """Sessions for one sandbox; ``write()`` serialises writers so read-check-update is atomic."""

    def __init__(self, url: str, guard: Callable[[], AbstractContextManager[None]] = nullcontext) -> None:
        """``guard`` wraps every write (``DiskSpace.writing``: a full disk becomes 507, its reserve freed)."""
        self.engine = make_engine(url)
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

    def dispose(self) -> None:
        self.engine.dispose()
