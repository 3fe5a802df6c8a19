"""Where a ledger keeps its rows: a SQLite file (the default) or a PostgreSQL database a team shares.

Both engines get the same SQL through DB-API, written with ``?`` placeholders (PostgreSQL's
``%s`` are swapped in here). What differs per engine is a method or constant of its store: the
schema's types, how a transaction takes its lock, how an entry's tag is read from its JSON.
Keys are made by the database (``INSERT ... RETURNING seq``), so any number of processes on any
number of machines append without colliding. PostgreSQL needs ``psycopg``
(``pip install 'imagekit[postgres]'``), loaded only when such a ledger is opened.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, closing, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .._db_watch import cut_after
from .._sqlite import check_file, open_wal
from .._urls import shown_url, without_secrets
from ..errors import ConfigError, LedgerUnavailableError
from .entries import Status

__all__ = ["Store", "open_store", "is_url", "shown_location", "checked_location", "cut_after", "SKEW_SECONDS",
           "skew_note", "ENV_LEDGER_URL"]

ENV_LEDGER_URL = "IMAGEKIT_LEDGER_URL"
"""The ledger every client records into unless told otherwise: a PostgreSQL URL or a SQLite file."""
T = TypeVar("T")
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
POSTGRES_EXTRA = "pip install 'imagekit[postgres]'"
SKEW_SECONDS = 300.0
"""How far this machine's clock may be from a database's before it is told (once per process)."""
CONNECT_SECONDS = 3
"""How long opening a connection to a PostgreSQL ledger may take before it counts as an outage."""
STATEMENT_SECONDS = 3.0
"""How long one statement may wait for a PostgreSQL ledger's answer: then its connection is cut and
the database counts as unreachable. A frozen server (a failover, a paused VM) still has its kernel
acknowledge every packet, so neither TCP nor the server's own timeouts would ever end the wait."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entries (
        seq {serial},
        time TEXT NOT NULL, account TEXT NOT NULL, operation TEXT NOT NULL,
        source_id {int}, image_ids TEXT NOT NULL, request_id TEXT, group_id TEXT, style_id {int},
        credits {real}, balance {real}, daily_credit {real}, monthly_credit {real}, default_credit {real},
        status TEXT NOT NULL, http_status INTEGER, error TEXT, latency {real}, source TEXT,
        tags TEXT NOT NULL DEFAULT '{{}}', uid TEXT)""",
    "CREATE INDEX IF NOT EXISTS entries_account ON entries (account, time)",
    """CREATE TABLE IF NOT EXISTS prices (
        account TEXT NOT NULL, key TEXT NOT NULL, credits {real} NOT NULL, source TEXT NOT NULL,
        time TEXT NOT NULL, PRIMARY KEY (account, key))""",
    """CREATE TABLE IF NOT EXISTS budgets (
        tag_key TEXT NOT NULL, tag_value TEXT NOT NULL, credit_limit {real} NOT NULL, warn_at {real},
        hard INTEGER NOT NULL, time TEXT NOT NULL, PRIMARY KEY (tag_key, tag_value))""",
    """CREATE TABLE IF NOT EXISTS holds (
        hold_id {serial}, account TEXT NOT NULL, tags TEXT NOT NULL, credits {real} NOT NULL,
        time TEXT NOT NULL, seq {int})""",
    "CREATE INDEX IF NOT EXISTS holds_seq ON holds (seq)",
    """CREATE TABLE IF NOT EXISTS alerts (
        tag_key TEXT NOT NULL, tag_value TEXT NOT NULL, threshold {real} NOT NULL, credit_limit {real} NOT NULL,
        period_start TEXT NOT NULL, spent {real} NOT NULL, time TEXT NOT NULL,
        PRIMARY KEY (tag_key, tag_value, threshold, credit_limit, period_start))""",
    """CREATE TABLE IF NOT EXISTS accounts (
        alias TEXT PRIMARY KEY, account TEXT NOT NULL, time TEXT NOT NULL)""",
)
_ADDED_COLUMNS = (
    ("entries", "source", "TEXT"),  # ledgers from before credit sources
    ("entries", "tags", "TEXT NOT NULL DEFAULT '{}'"),  # ledgers from before tags
    ("entries", "http_status", "INTEGER"),  # ledgers from before named statuses
    ("entries", "uid", "TEXT"),  # ledgers from before the spool
    ("budgets", "alerts", "TEXT"),  # ledgers from before alerts and periods (NULL: no alerts, all time)
    ("budgets", "period", "TEXT"),
    ("budgets", "tz", "TEXT"),
    ("budgets", "webhook", "TEXT"),
)
"""Columns later versions added: a ledger file from an earlier version gets them when opened."""
TABLES = ("entries", "prices", "budgets", "holds", "alerts", "accounts")
"""The tables a ledger holds (``_SCHEMA``): a SQLite file with others is not a ledger."""


def is_url(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return urlsplit(location).scheme in POSTGRES_SCHEMES


def checked_location(location: str | os.PathLike[str], what: str = "a ledger",
                     tables: Sequence[str] = TABLES) -> str:
    """``location`` as a ledger or journal location: a SQLite file whose folder exists (``sqlite:///``
    before it is dropped), new or of imagekit's holding none but ``tables``, or a PostgreSQL URL;
    anything else is a one-line ConfigError, and nothing is created or written."""
    text = os.fspath(location)
    text = text.removeprefix("sqlite:///") if text.startswith("sqlite:///") else text
    if is_url(text) or text == ":memory:":
        return text
    scheme = urlsplit(text).scheme
    if "://" in text or (len(scheme) > 1 and text.startswith(scheme + ":")):
        raise ConfigError(f"{what} is a SQLite file or a postgresql:// URL, not {shown_location(text)!r}")
    folder = Path(text).parent
    if not text:
        raise ConfigError(f"{what} needs a SQLite file or a postgresql:// URL, not an empty name")
    if Path(text).is_dir():
        raise ConfigError(f"{text} is a folder; {what} is a SQLite file (e.g. {Path(text) / 'ledger.sqlite'})")
    if not folder.is_dir():
        raise ConfigError(f"{what} at {text}: no folder {folder} (create it first, or name a file in a folder "
                          "that exists)")
    if Path(text).is_file() and not _is_sqlite(Path(text)):
        raise ConfigError(f"{text} is not a SQLite database, so it is not {what}: name a new file or one "
                          "imagekit made (nothing was written to it)")
    if Path(text).is_file():
        check_file(text, what, tables)
    return text


CREATING_SECONDS = 2.0
"""How long an empty file made a moment ago is given to become a SQLite database: another process
may be creating that ledger or journal this instant (SQLite makes the file, then writes its header)."""


def _is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a SQLite database. An empty file is a person's, not ours, unless it was
    made in the last seconds and gains a SQLite header within ``CREATING_SECONDS``.

    Read through SQLite, never with a file descriptor of our own: closing one would drop every
    POSIX lock this process holds on the file (its open ledger's or journal's), and another process
    closing its connection would then take itself for the last, checkpoint and delete the WAL this
    process still writes to, losing what it writes after."""
    deadline = time.monotonic() + CREATING_SECONDS
    while True:
        try:
            stat = path.stat()
        except OSError:
            return False
        if stat.st_size:
            try:
                with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                    db.execute("PRAGMA schema_version").fetchone()  # reads the header: DatabaseError if none
            except sqlite3.DatabaseError as exc:
                return "locked" in str(exc) or "busy" in str(exc)  # a database another process writes
            return True
        if time.time() - stat.st_mtime >= 10 * CREATING_SECONDS or time.monotonic() > deadline:
            return False
        time.sleep(0.01)


def shown_location(location: str) -> str:
    """``location`` for reprs and messages: a URL without user, password or query (``shown_url``)."""
    return shown_url(location)


def skew_note(skew: float, database: str, what: str) -> str | None:
    """What to tell when this machine's clock is ``skew`` seconds ahead of (negative: behind) the
    clock of ``database``, past ``SKEW_SECONDS``; ``what`` goes by the database's clock."""
    if abs(skew) <= SKEW_SECONDS:
        return None
    size = f"{abs(skew) / 3600:.1f} hours" if abs(skew) >= 5400 else f"{abs(skew) / 60:.0f} minutes"
    return (f"this machine's clock is {size} {'ahead of' if skew > 0 else 'behind'} the clock of {database}: "
            f"{what} go by the database's clock, but what this machine writes is dated by its own (set its clock "
            "right, e.g. with NTP)")


class Store:
    """One database, opened on first use and shared by every Ledger on it in this process.

    Every statement runs under ``lock``; ``transaction()`` holds it (and the engine's write lock)
    for a read-then-write that must not interleave with another writer's.
    """

    _open: dict[str, Store] = {}
    _open_lock = threading.Lock()
    serial, real, integer = "INTEGER PRIMARY KEY AUTOINCREMENT", "REAL", "INTEGER"
    for_update = ""
    """What a SELECT adds to lock the rows it reads until the transaction ends."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.lock = threading.RLock()
        self._db: Any = None
        self._pid = 0
        self._depth = 0

    @classmethod
    def at(cls, location: str) -> Store:
        with cls._open_lock:
            if location not in cls._open:
                cls._open[location] = PostgresStore(location) if is_url(location) else SQLiteStore(location)
            return cls._open[location]

    def exists(self) -> bool:
        """Whether there is anything to read (a SQLite file is not made by a read)."""
        return True

    def tag_of(self, column: str, key: str = "?") -> str:
        """SQL reading from the JSON ``column`` the tag whose name the SQL ``key`` gives (a parameter
        by default, or a column)."""
        raise NotImplementedError

    def now(self, seconds_ago: float = 0.0) -> str:
        """SQL for the database's own time (``seconds_ago`` earlier) in the ledger's format (see
        ``entries.now``): what holds expire by, whatever the clocks of the machines writing say."""
        raise NotImplementedError

    def clock_skew(self, writer: datetime) -> float:
        """Seconds the ``writer``'s clock is ahead of the database's (negative: behind)."""
        row = self.fetchone(f"SELECT {self.now()}")
        assert row is not None
        return (writer - datetime.fromisoformat(row[0])).total_seconds()

    # Statements outside a transaction are reads and upserts: safe to send again on a fresh
    # connection when the server dropped the old one. Inside one, the transaction fails as a whole.

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self._once_more(lambda: list(self._cursor(sql, params).fetchall()))

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        with self.lock:
            row = self._once_more(lambda: _first(self._cursor(sql, params)))
            return tuple(row) if row is not None else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        with self.lock:
            self._once_more(lambda: self._cursor(sql, params))

    def _once_more(self, run: Callable[[], T]) -> T:
        """``run``, once more on a new connection if the server dropped the old one; a database that
        cannot be reached raises LedgerUnavailableError (an outage, not a configuration error)."""
        try:
            try:
                return run()
            except Exception:
                if self._depth or self._db is None or not self._lost():
                    raise
                return run()  # on a new connection (see ``_connection``)
        except LedgerUnavailableError:
            raise
        except Exception as exc:
            if not self._outage(exc):
                raise
            said = without_secrets(str(exc).strip(), self.location)
            raise LedgerUnavailableError(f"the ledger at {shown_location(self.location)} cannot be reached: "
                                         f"{said.splitlines()[0] if said else type(exc).__name__}") from exc

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Statements inside commit together, or not at all; nested ones join the outer one."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            self._once_more(lambda: self._begin(self._connection()))  # nothing ran yet: safe to repeat
            db, self._depth = self._db, 1
            try:
                yield self
            except BaseException:
                self._depth = 0
                if not self._lost():  # a dropped connection has rolled back already
                    self._rollback(db)
                raise
            self._depth = 0
            self._once_more(lambda: self._commit(db))

    def close(self) -> None:
        with self.lock:
            if self._db is not None and self._pid == os.getpid():
                self._db.close()
            self._db = None

    def _cursor(self, sql: str, params: Sequence[Any]) -> Any:
        return self._connection().execute(self._sql(sql), tuple(params))

    def _sql(self, sql: str) -> str:
        return sql

    def _connection(self) -> Any:
        # A forked child must not share its parent's connection: it opens its own; so does a store
        # whose connection the server dropped (a restart), once no transaction depends on it.
        if self._db is None or self._pid != os.getpid() or (not self._depth and self._lost()):
            self._db, self._pid = self._connect(), os.getpid()
            try:
                with self.transaction():
                    self._create()
            except BaseException:
                self._db.close()
                self._db = None
                raise
        return self._db

    def _lost(self) -> bool:
        """Whether the connection is gone for good (it must be opened again)."""
        return False

    def _outage(self, exc: Exception) -> bool:
        """Whether ``exc`` says the database cannot be reached (rather than a statement was wrong)."""
        return False

    def _create(self) -> None:
        for statement in _SCHEMA:
            self._cursor(statement.format(serial=self.serial, real=self.real, int=self.integer), ())
        for table, column, kind in _ADDED_COLUMNS:
            if column not in self._columns(table):
                self._cursor(f"ALTER TABLE {table} ADD COLUMN {column} {kind}", ())
        # An entry is written once, however often a spool's flush of it is tried (see ``spool``).
        self._cursor("CREATE UNIQUE INDEX IF NOT EXISTS entries_uid ON entries (uid)", ())
        self._name_statuses()

    def _name_statuses(self) -> None:
        """Ledgers from before named statuses kept an HTTP code (or an image's FAILED) as the status:
        give each its name, and the code its own column."""
        for (old,) in self._cursor("SELECT DISTINCT status FROM entries WHERE status NOT IN (?, ?, ?, ?, ?)",
                                   tuple(status.value for status in Status)).fetchall():
            if old.isdigit():
                name, code = (Status.ANSWERED if old.startswith("2") else Status.FAILED), int(old)
            else:
                name, code = (Status.REFUNDED if old == "FAILED" else Status.NO_RESPONSE), None
            self._cursor("UPDATE entries SET status = ?, http_status = ? WHERE status = ?", (name.value, code, old))

    def _connect(self) -> Any:
        raise NotImplementedError

    def _columns(self, table: str) -> set[str]:
        raise NotImplementedError

    def _begin(self, db: Any) -> None:
        raise NotImplementedError

    def _commit(self, db: Any) -> None:
        db.execute("COMMIT")

    def _rollback(self, db: Any) -> None:
        db.execute("ROLLBACK")


def _first(cursor: Any) -> Any:
    """The first row of ``cursor``, the cursor then closed: SQLite commits an ``INSERT ... RETURNING``
    (autocommit) only once its statement is reset, and until then holds the write lock and keeps
    every later write of the connection from other processes."""
    try:
        return cursor.fetchone()
    finally:
        cursor.close()


class SQLiteStore(Store):
    """A SQLite file in WAL mode: one writer at a time across processes, readers never blocked."""

    what: str = "a ledger"
    tables: Sequence[str] = TABLES
    """What the file is, and the tables it may hold: another program's file is refused (``open_wal``)."""

    def exists(self) -> bool:
        return Path(self.location).exists()

    def tag_of(self, column: str, key: str = "?") -> str:
        return f"""json_extract({column}, '$."' || {key} || '"')"""  # tag names never need escaping (``tags``)

    def now(self, seconds_ago: float = 0.0) -> str:
        return f"strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now', '{-float(seconds_ago)} seconds')"

    def _connect(self) -> Any:
        Path(self.location).parent.mkdir(parents=True, exist_ok=True)
        # Autocommit, WAL: each entry is durable on its own and a kill -9 loses at most the last.
        return open_wal(self.location, self.what, self.tables)

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self._cursor(f"PRAGMA table_info({table})", ())}

    def _begin(self, db: Any) -> None:
        db.execute("BEGIN IMMEDIATE")  # the write lock now, not at the first write: no lost update


class PostgresStore(Store):
    """A PostgreSQL database through psycopg 3; row locks (``FOR UPDATE``) order competing writers."""

    serial, real, integer = "BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION", "BIGINT"
    for_update = " FOR UPDATE"
    _SCHEMA_LOCK = 0x1D6E4

    def tag_of(self, column: str, key: str = "?") -> str:
        return f"({column}::jsonb ->> {key})"

    def now(self, seconds_ago: float = 0.0) -> str:
        return (f"to_char((clock_timestamp() AT TIME ZONE 'UTC') - make_interval(secs => {float(seconds_ago)}), "
                """'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')""")

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _cursor(self, sql: str, params: Sequence[Any]) -> Any:
        db = self._connection()
        with self._bounded(db):
            return db.execute(self._sql(sql), tuple(params) or None)

    def _connect(self) -> Any:
        from ..extras import require

        psycopg = require("psycopg")
        conninfo = require("psycopg.conninfo")
        conninfo_to_dict, make_conninfo = conninfo.conninfo_to_dict, conninfo.make_conninfo

        url = "postgresql://" + self.location.split("://", 1)[1]
        bound = int(STATEMENT_SECONDS * 1000)
        options = f"{conninfo_to_dict(url).get('options') or ''} -c statement_timeout={bound} -c lock_timeout={bound}"
        # A refused connection fails at once; a host that does not answer at all, after CONNECT_SECONDS;
        # a network that drops packets, after the keepalives or tcp_user_timeout; a slow statement or a
        # lock held elsewhere, after the server's timeouts; a server that stops answering, by ``_bounded``.
        return psycopg.connect(make_conninfo(url, connect_timeout=CONNECT_SECONDS, keepalives=1, keepalives_idle=5,
                                             keepalives_interval=2, keepalives_count=2, tcp_user_timeout=bound,
                                             options=options.strip()), autocommit=True)

    def _bounded(self, db: Any) -> AbstractContextManager[None]:
        """``cut_after(db, STATEMENT_SECONDS)``: a statement on a server that stopped answering fails as
        an outage (and the spool takes over) instead of waiting for ever."""
        return cut_after(db, STATEMENT_SECONDS)

    def _lost(self) -> bool:
        return bool(self._db is not None and (self._db.closed or self._db.broken))

    def _outage(self, exc: Exception) -> bool:
        import psycopg

        return isinstance(exc, psycopg.OperationalError) or self._lost()

    def _create(self) -> None:
        # Two processes creating the tables at once would collide in the catalogue: one at a time.
        self._cursor("SELECT pg_advisory_xact_lock(?)", (self._SCHEMA_LOCK,))
        super()._create()

    def _columns(self, table: str) -> set[str]:
        rows = self._cursor("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                            "AND table_schema = current_schema()", (table,))
        return {row[0] for row in rows}

    def _begin(self, db: Any) -> None:
        with self._bounded(db):
            db.execute("BEGIN")

    def _commit(self, db: Any) -> None:
        with self._bounded(db):
            db.execute("COMMIT")

    def _rollback(self, db: Any) -> None:
        with self._bounded(db):
            db.execute("ROLLBACK")




def check_driver(location: str) -> None:
    """Fail now, with the install hint, when ``location`` needs a driver that is not installed."""
    if is_url(location) and importlib.util.find_spec("psycopg") is None:
        raise ConfigError(f"the ledger {shown_location(location)} is on PostgreSQL, which needs psycopg: "
                          f"{POSTGRES_EXTRA}")


def open_store(location: str) -> Store:
    """The process's store for ``location`` (a SQLite path or a PostgreSQL URL)."""
    check_driver(location)
    return Store.at(location if is_url(location) else str(Path(location).resolve()))
