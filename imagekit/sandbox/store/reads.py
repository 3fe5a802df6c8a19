"""Small reads on the request path, run on the event loop over the driver's own connection.

A request that only needs a row or two (who is calling) reads it without a worker thread and
without SQLAlchemy's execution layer: for a one-row indexed SELECT both cost several times the query
itself. Statements are still written with SQLAlchemy and compiled once for the engine's dialect,
and values are converted by the column types' own result processors, so a row reads the same as
through a session, on SQLite or PostgreSQL. Only reads go this way; every write takes
``Database.write()`` in a worker thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any, TypeVar

from sqlalchemy import Select
from sqlalchemy.engine import Engine
from sqlalchemy.engine.interfaces import DBAPICursor
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import DeclarativeBase, make_transient_to_detached
from sqlalchemy.pool import PoolProxiedConnection

from ..._db_watch import cut_after

_Mapped = TypeVar("_Mapped", bound=DeclarativeBase)


class PreparedRead:
    """A SELECT compiled once for ``engine``'s dialect; ``first(cursor, **params)`` or ``rows(...)`` runs it."""

    def __init__(self, statement: Select[Any], engine: Engine) -> None:
        dialect = engine.dialect
        self._compiled = statement.compile(dialect=dialect)
        self.sql = self._compiled.string
        self._order: list[str] | None = getattr(self._compiled, "positiontup", None)
        self._convert: list[Callable[[Any], Any] | None] = [
            column.type.dialect_impl(dialect).result_processor(dialect, None)
            for column in statement.selected_columns]

    def first(self, cursor: DBAPICursor, **params: Any) -> tuple[Any, ...] | None:
        """The first row (converted to Python values), or None."""
        rows = self.rows(cursor, limit=1, **params)
        return rows[0] if rows else None

    def rows(self, cursor: DBAPICursor, limit: int | None = None, **params: Any) -> list[tuple[Any, ...]]:
        """Every row (or the first ``limit``), converted to Python values."""
        bound = self._compiled.construct_params(params)
        arguments = tuple(bound[name] for name in self._order) if self._order else bound
        cursor.execute(self.sql, arguments)
        found = cursor.fetchall() if limit is None else cursor.fetchmany(limit)
        return [tuple(value if convert is None or value is None else convert(value)
                      for convert, value in zip(self._convert, row, strict=True)) for row in found]


def detached(cls: type[_Mapped], fields: Sequence[str], values: Sequence[Any]) -> _Mapped:
    """An instance of ``cls`` as if loaded by a session that has since closed.

    Filling the instance's dict is what SQLAlchemy's own loader does; building it through the
    constructor would record every value as a change to flush, and cost four times as much."""
    instance: _Mapped = cls.__mapper__.class_manager.new_instance()
    instance.__dict__.update(zip(fields, values, strict=True))
    make_transient_to_detached(instance)
    return instance


class LoopReader:
    """One pooled connection per thread that reads (in practice: the event loop's), kept open with
    one cursor (a cursor made per read cost psycopg a third of the read).

    Kept, it is never waited for: a request on the event loop must not queue behind worker threads
    for a pooled connection. Each read ends its transaction at once (the next one sees what others
    committed since, and PostgreSQL holds no snapshot open); a connection found broken is replaced once.
    On PostgreSQL the kept connection is in autocommit mode: a read is one round trip, not three
    (BEGIN, SELECT, ROLLBACK); it leaves that mode before going back to the pool.
    """

    def __init__(self, engine: Engine, wait: float | None = None) -> None:
        """``wait``: the longest a read may wait on a PostgreSQL server (``Database.wait``): past it
        the connection is cut and the read fails as an outage, however the server went silent."""
        self.engine = engine
        self._autocommit = engine.dialect.name == "postgresql"
        self._wait = wait if self._autocommit else None
        self._local = threading.local()
        self._held: list[tuple[PoolProxiedConnection, DBAPICursor]] = []
        self._lock = threading.Lock()

    def first(self, read: PreparedRead, **params: Any) -> tuple[Any, ...] | None:
        """``read``'s first row, or None."""
        rows = self.rows(read, limit=1, **params)
        return rows[0] if rows else None

    def rows(self, read: PreparedRead, limit: int | None = None, **params: Any) -> list[tuple[Any, ...]]:
        """``read``'s rows (the first ``limit``). A driver error is raised as SQLAlchemy's (as a
        session would raise it), so a lost database reads the same here as anywhere."""
        dialect = self.engine.dialect
        dbapi_error = dialect.loaded_dbapi.Error
        for attempt in (1, 2):
            try:
                connection, cursor = self._connection()
            except dbapi_error as exc:  # the pool does not wrap what connecting raised
                raise DBAPIError.instance(None, None, exc, dbapi_error, dialect=dialect) from exc
            try:
                with cut_after(connection.dbapi_connection, self._wait) if self._wait else nullcontext():
                    rows = read.rows(cursor, limit, **params)
            except dbapi_error as exc:
                lost = dialect.is_disconnect(exc, connection.driver_connection, None)
                if lost:
                    self._drop(connection)
                    if attempt == 1:
                        continue
                else:
                    connection.rollback()
                raise DBAPIError.instance(read.sql, params, exc, dbapi_error, connection_invalidated=lost,
                                          dialect=dialect) from exc
            if not self._autocommit:
                connection.rollback()
            return rows
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _connection(self) -> tuple[PoolProxiedConnection, DBAPICursor]:
        kept: tuple[PoolProxiedConnection, DBAPICursor] | None = getattr(self._local, "kept", None)
        if kept is None:
            connection = self.engine.raw_connection()
            if self._autocommit:
                connection.driver_connection.autocommit = True  # type: ignore[union-attr]
            kept = self._local.kept = (connection, connection.cursor())
            with self._lock:
                self._held.append(kept)
        return kept

    def _drop(self, connection: PoolProxiedConnection) -> None:
        connection.invalidate()
        with self._lock:
            self._held.remove(self._local.kept)
        self._local.kept = None

    def close(self) -> None:
        """Give every thread's connection back to the pool (before the engine is disposed)."""
        with self._lock:
            held, self._held = self._held, []
        for connection, cursor in held:
            cursor.close()
            if self._autocommit:
                connection.driver_connection.autocommit = False  # type: ignore[union-attr]
            connection.close()
