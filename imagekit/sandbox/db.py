"""Database engine, sessions and the one write lock that makes credit changes atomic."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from .datadir import DataDirError
from .tables import Base


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and foreign keys."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
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

    def __init__(self, url: str):
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # SQLite allows one writer at a time anyway; taking the lock in-process first turns
        # "read balance, check, update" into one atomic step and avoids SQLITE_BUSY upgrades.
        self._write_lock = threading.RLock()

    def create_all(self) -> None:
        Base.metadata.create_all(self.engine)

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
    def write(self) -> Iterator[Session]:
        """A session whose changes commit together on success and roll back on any error."""
        with self._write_lock, self._sessions() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
