"""The spool: what a shared ledger could not write while its database was unreachable, kept in a local
SQLite file (``$IMAGEKIT_HOME/spool/``) and written to the database once it answers again.

Three kinds of write wait here, in the order they were made: entries (with the budget hold each
replaces), prices learned, and settlements (credits given to an entry afterwards). Writing each is
idempotent: an entry carries its uid and the database keeps one row per uid, a price is an upsert, a
settlement sets an entry's credits by uid. So a flush cut off anywhere, tried again, or run by two
processes at once writes every entry exactly once. Rows leave the spool in the transaction that
wrote them, under the spool's write lock.

The spool also keeps what the database last said about budgets and prices, so that while it cannot
be asked a hard budget still refuses work, and estimates still have prices.

A spool is named by the database's identity (host, port, database and user, as libpq resolves them),
not by the URL's spelling: ``localhost`` and ``127.0.0.1`` find the same one. A spool named by an
earlier version (a hash of the URL as written) is brought into it when that URL is next used.
"""

from __future__ import annotations

import getpass
import hashlib
import ipaddress
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._sqlite import open_wal
from ..home import home_dir

__all__ = ["Spool", "spool_for", "identity", "RETRY_SECONDS"]

RETRY_SECONDS = 2.0
"""After a failed attempt, how long writes go straight to the spool before the database is tried again."""
REMEMBER_SECONDS = 10.0
"""How often the budgets and prices kept for an outage are brought up to date."""
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS waiting (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,"
    " account TEXT NOT NULL, uid TEXT, payload TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS seen (name TEXT PRIMARY KEY, payload TEXT NOT NULL)",
)
_LOOPBACK = "localhost"
"""How every address of this machine (a loopback address, a name for one, a unix socket) is named."""
_spools: dict[str, Spool] = {}
_spools_lock = threading.Lock()


def identity(location: str) -> str:
    """The database a PostgreSQL URL reaches: ``host:port/database user`` with libpq's defaults
    filled in and every name of this machine as ``localhost``; no password, however it is spelled."""
    from psycopg.conninfo import conninfo_to_dict

    given = conninfo_to_dict("postgresql://" + location.split("://", 1)[1])
    user = str(given.get("user") or os.environ.get("PGUSER") or getpass.getuser())
    hosts = str(given.get("host") or given.get("hostaddr") or os.environ.get("PGHOST") or _LOOPBACK)
    port = str(given.get("port") or os.environ.get("PGPORT") or 5432)
    database = given.get("dbname") or os.environ.get("PGDATABASE") or user
    return f"{','.join(_host(host) for host in hosts.split(','))}:{port}/{database} {user}"


def _host(host: str) -> str:
    """One host as its identity: this machine's names and addresses are one; others as written."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("/") or host == _LOOPBACK:
        return _LOOPBACK
    try:
        return _LOOPBACK if ipaddress.ip_address(host.strip("[]")).is_loopback else str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        pass
    try:  # a name: this machine's (from /etc/hosts, at once) or another's
        found = {info[4][0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except OSError:
        return host
    return _LOOPBACK if found and all(ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in found) else host


def spool_for(location: str) -> Spool:
    """The process's spool of the PostgreSQL ledger at ``location`` (one file per database, in
    ``$IMAGEKIT_HOME/spool``), with what an earlier version spooled under that URL brought in."""
    named = identity(location)
    with _spools_lock:
        if named not in _spools:
            folder = home_dir() / "spool"
            spool = Spool(folder / f"ledger-{hashlib.sha256(named.encode()).hexdigest()[:16]}.sqlite")
            spool.bring_in(folder / f"ledger-{hashlib.sha256(location.encode()).hexdigest()[:16]}.sqlite")
            _spools[named] = spool
        return _spools[named]


class Spool:
    """One spool file, and what this process knows of its ledger's reachability."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.down_since: float | None = None
        """When the database was last found unreachable (monotonic); None while it answers."""
        self.retry_at = 0.0
        self._db: sqlite3.Connection | None = None
        self._remembered: dict[str, float] = {}
        self._maybe_waiting = path.exists()  # rows a process that died left behind are flushed too

    def due(self) -> bool:
        """Whether to try the database now (it answers, or its retry time came)."""
        return self.down_since is None or time.monotonic() >= self.retry_at

    def went_down(self) -> bool:
        """Note a failed attempt; True the first time of an outage (warn then, once)."""
        now = time.monotonic()
        self.retry_at = now + RETRY_SECONDS
        first, self.down_since = self.down_since is None, self.down_since or now
        return first

    def came_back(self) -> bool:
        """Note a successful attempt; True when it ends an outage."""
        ended, self.down_since = self.down_since is not None, None
        return ended

    def bring_in(self, old: Path) -> None:
        """Move what waits in ``old`` (a spool an earlier version named by the URL's spelling) here."""
        if old == self.path or not old.exists():
            return
        with self.lock:
            db = self._connection()
            db.execute("ATTACH DATABASE ? AS old", (str(old),))
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO waiting (kind, account, uid, payload) SELECT kind, account, uid, payload "
                           "FROM old.waiting ORDER BY id")
                db.execute("INSERT OR IGNORE INTO seen SELECT name, payload FROM old.seen")
                db.execute("COMMIT")
            finally:
                db.execute("DETACH DATABASE old")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{old}{suffix}").unlink(missing_ok=True)
            self._maybe_waiting = True

    def count(self) -> int:
        """How many entries wait here (of every account)."""
        with self.lock:
            if not self.path.exists():
                return 0
            return int(self._connection().execute("SELECT count(*) FROM waiting WHERE kind = 'entry'").fetchone()[0])

    # --- writes that wait ------------------------------------------------------------------

    def put(self, kind: str, account: str, payload: dict[str, Any], uid: str | None = None) -> None:
        """Keep one write for later."""
        with self.lock:
            self._connection().execute("INSERT INTO waiting (kind, account, uid, payload) VALUES (?, ?, ?, ?)",
                                       (kind, account, uid, json.dumps(payload)))
            self._maybe_waiting = True

    def settle(self, uid: str, credits: float, source: str) -> bool:
        """Give a waiting entry its credits; False when it is not waiting here (it was written)."""
        with self.lock:
            if not self._maybe_waiting:
                return False
            db = self._connection()
            row = db.execute("SELECT id, payload FROM waiting WHERE kind = 'entry' AND uid = ?", (uid,)).fetchone()
            if row is None:
                return False
            payload = {**json.loads(row[1]), "credits": credits, "source": source}
            db.execute("UPDATE waiting SET payload = ? WHERE id = ?", (json.dumps(payload), row[0]))
            return True

    def waiting(self, kind: str, account: str) -> list[dict[str, Any]]:
        """The writes of ``kind`` (entry, price) for ``account`` waiting here, oldest first."""
        with self.lock:
            if not self._maybe_waiting:
                return []
            rows = self._connection().execute("SELECT payload FROM waiting WHERE kind = ? AND account = ?"
                                              " ORDER BY id", (kind, account)).fetchall()
            return [json.loads(payload) for (payload,) in rows]

    @contextmanager
    def draining(self) -> Iterator[list[tuple[str, dict[str, Any]]]]:
        """The writes waiting, oldest first, under the spool's write lock: they leave the spool when
        the block ends, and stay when it raises (nothing is lost; writing them again is harmless)."""
        with self.lock:
            if not self._maybe_waiting:
                yield []
                return
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")  # another process draining waits: each row is written by one
            try:
                rows = db.execute("SELECT id, kind, payload FROM waiting ORDER BY id").fetchall()
                yield [(kind, json.loads(payload)) for _, kind, payload in rows]
                db.executemany("DELETE FROM waiting WHERE id = ?", [(row_id,) for row_id, _, _ in rows])
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            self._maybe_waiting = False

    # --- what the database last said --------------------------------------------------------

    def remember(self, name: str, value: Callable[[], Any], now: bool = False) -> None:
        """Keep the database's answer to ``name`` (budgets, an account's prices): ``value()`` is
        asked at most every ``REMEMBER_SECONDS`` (``now``: this time anyway), so reads on the request
        path stay one query."""
        with self.lock:
            if not now and time.monotonic() < self._remembered.get(name, float("-inf")) + REMEMBER_SECONDS:
                return
            self._connection().execute("INSERT INTO seen (name, payload) VALUES (?, ?) ON CONFLICT (name)"
                                       " DO UPDATE SET payload = excluded.payload", (name, json.dumps(value())))
            self._remembered[name] = time.monotonic()

    def recall(self, name: str) -> Any:
        """The last answer kept for ``name``, or None if there is none."""
        with self.lock:
            if not self.path.exists():
                return None
            row = self._connection().execute("SELECT payload FROM seen WHERE name = ?", (name,)).fetchone()
            return None if row is None else json.loads(row[0])

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = open_wal(str(self.path), "a ledger's spool", ("waiting", "seen"))
            for statement in _SCHEMA:
                db.execute(statement)
            self._db = db
        return self._db
