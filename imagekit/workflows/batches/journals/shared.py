"""A sweep's journal in PostgreSQL: any number of processes, on any machines, drain one sweep together.

A sweep is a named batch. Its rows live in ``sweep_rows``; a process takes one at a time by leasing
it (``FOR UPDATE SKIP LOCKED``, as PostgreSQL queues do): the lease names the process and runs out
``lease`` seconds after its last renewal, so the rows of a process that died come back to the
others, which settle a row left ``sent`` or ``created`` as a resumed batch does (by probing, never
by sending blindly). Such a row needs the account that sent it, so only a process holding that key
takes it. A row done is never taken again.

Every claim of a row gives it a new fencing token (``lease_version``, one more than the last claim's):
every write of the row, and the one before each create is sent, names this process and its token,
and is refused when another process has claimed the row since (its lease ran out while this one was
paused: a GC pause, a closed lid, a stopped VM). The runner then drops the row (RowLost) and sends
nothing for it. A done row is written only as done. The write before a send renews the row's lease:
only a pause longer than a whole lease, between that write and the request leaving, escapes it.

Processes on one key share the account's ``simultaneousLimit`` through ``sweep_slots``: a
generation holds one of the account's slots, leased the same way, for as long as it runs.

An account's create lock (untagged creates go one at a time, see ``runner``) is a lease too, in
``sweep_create_locks``, with a fencing token of its own: a process paused while it holds the lock
stalls the others for one lease, not for the whole pause, and the write before its create is sent
names the lock's token as well as the row's, so once another process has taken the lock the paused
one sends nothing (its row goes back to the sweep).

An outage of the database (a restart, the network down) is waited out for as long as this
process's leases last, reconnecting every second; past that a row of this process's could be
another's, so the run stops with JournalUnavailableError. On reconnection the process first renews
what it holds and gives back what a lost answer leased it unknowingly, and takes its accounts'
create locks where no other process took them meanwhile.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any, TypeVar

import anyio

from ....errors import ConfigError, JournalUnavailableError
from ....ledger.store import cut_after, is_url, shown_location, skew_note
from ..options import RunOptions
from ..rows import Row
from ..state import RunState
from .feed import Feed
from .journal import FIELDS, MADE_NOTHING, RowLost, RowRecord, another_grid, grid_digest, row_values
from .tables import connect, make_tables, wait_bound

__all__ = ["SharedJournal", "SharedFeed", "is_url"]

_IN_DOUBT = ("sent", "created")
"""States only a process holding the row's account can settle."""
RECONNECT_EVERY = 1.0
"""Seconds between tries to reach the database during an outage."""

log = logging.getLogger("imagekit")
T = TypeVar("T")
_told: set[str] = set()
"""The journals whose clock skew this process told of."""
_told_lock = threading.Lock()


_UNHELD = "(owner IS NULL OR lease_until < now())"
"""A row no live process holds (SQL): none took it, or its lease ran out."""


class SharedJournal:
    """Row states of one named sweep in PostgreSQL, leased to the processes that drain it."""

    def __init__(self, url: str, name: str, lease: float = 30.0) -> None:
        if not name:
            raise ConfigError("a sweep in a shared journal needs a name: ik.batch(rows, name='lighthouses')")
        if not lease > 0:
            raise ConfigError(f"a lease is a number of seconds above 0 (not {lease!r})")
        self.url, self.name, self.lease = url, name, float(lease)
        self.location = url
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        """Who holds a lease: this journal's process (host, pid, and a nonce for several in one)."""
        self.path = f"{shown_location(url)}#{name}"
        self._lock = threading.Lock()
        self._slots_made: set[tuple[str, int]] = set()
        self._rows: dict[str, int] = {}
        """Rows this process holds, each with the fencing token of its claim."""
        self._slots: set[tuple[str, int]] = set()
        self._locks: dict[str, int] = {}
        """Slots, and accounts' create locks with the fencing token of each, this process holds."""
        self._locks_made: set[str] = set()
        self._renewed = time.monotonic()
        """When this process last renewed its leases: none runs out before this plus ``lease``."""
        self._lost: float | None = None
        """When the database went away, during an outage."""
        self._db: Any = connect(url, self.lease)
        make_tables(self._db)
        self._tell_skew()

    def _tell_skew(self) -> None:
        """Tell once per process and database when this machine's clock is far from the database's:
        leases go by the database's (``now()``), and the rows' times this machine writes by its own."""
        (theirs,) = self._db.execute("SELECT clock_timestamp()").fetchone()
        note = skew_note((datetime.now(UTC) - theirs).total_seconds(), f"the sweep's journal ({self.path})",
                         "its leases")
        with _told_lock:
            if note is None or self.url in _told:
                return
            _told.add(self.url)
        log.warning("imagekit: %s", note)

    def __repr__(self) -> str:
        return f"SharedJournal({self.path!r})"

    def _do(self, work: Callable[[Any], T]) -> T:
        """``work(connection)`` under this journal's lock, through an outage of the database (see the
        module): tried again on a new connection until this process's leases would run out."""
        import psycopg

        with self._lock:
            while True:
                try:
                    if self._db is None:
                        self._db = connect(self.url, self.lease, outage=True)
                        with cut_after(self._db, wait_bound(self.lease)):
                            self._restore(self._db)
                        if self._lost is not None:
                            log.warning("imagekit: the sweep's journal %s answers again, %.1f s after it went away",
                                        self.path, time.monotonic() - self._lost)
                            self._lost = None
                    with cut_after(self._db, wait_bound(self.lease)):  # a frozen server: an outage too
                        return work(self._db)
                except psycopg.OperationalError as exc:
                    self._went_away(exc)

    def _went_away(self, exc: Exception) -> None:
        """The connection failed: wait to try again, or raise JournalUnavailableError past the leases."""
        if self._db is not None:
            self._db.close()
            self._db = None
        give_up = self._renewed + self.lease - min(2.0, self.lease / 4)
        if self._lost is None:
            self._lost = time.monotonic()
            first_line = (str(exc).strip() or type(exc).__name__).splitlines()[0]
            log.warning("imagekit: the sweep's journal %s cannot be reached (%s); trying again every %g s for %.0f s, "
                        "while this process's leases last", self.path, first_line, RECONNECT_EVERY,
                        max(0.0, give_up - self._lost))
        if time.monotonic() + RECONNECT_EVERY > give_up:
            raise JournalUnavailableError(
                f"The sweep's journal {self.path} could not be reached for {time.monotonic() - self._lost:.0f} s, "
                f"as long as this process's leases last ({self.lease:g} s): this run stops, and its rows go to "
                "the other processes when their leases run out. Run it again once the database is back.") from exc
        time.sleep(RECONNECT_EVERY)

    def _restore(self, db: Any) -> None:
        """On a new connection after an outage: renew what this process holds, give back what a lost
        answer leased it unknowingly, and renew its create locks (unless another process took them)."""
        db.execute("UPDATE sweep_rows SET owner = NULL, lease_until = NULL, run_id = NULL"
                   " WHERE sweep = %s AND owner = %s AND NOT key = ANY(%s)", (self.name, self.owner, list(self._rows)))
        db.execute("UPDATE sweep_slots SET owner = NULL, lease_until = NULL WHERE owner = %s"
                   " AND NOT (account || ':' || slot) = ANY(%s)",
                   (self.owner, [f"{account}:{slot}" for account, slot in self._slots]))
        db.execute("UPDATE sweep_create_locks SET owner = NULL, lease_until = NULL WHERE owner = %s"
                   " AND NOT account = ANY(%s)", (self.owner, list(self._locks)))
        self._renew(db)

    # --- the sweep ----------------------------------------------------------------------------

    def register(self, keys: Sequence[str]) -> None:
        """Make the sweep's rows (once); a different grid under the same name is refused."""
        digest = grid_digest(keys)

        def work(db: Any) -> None:
            with db.transaction():
                db.execute("INSERT INTO sweeps (name, digest, row_count) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                           (self.name, digest, len(keys)))
                known, count = db.execute("SELECT digest, row_count FROM sweeps WHERE name = %s FOR UPDATE",
                                          (self.name,)).fetchone()
                if known != digest:
                    # a grid that made nothing gives way (MADE_NOTHING): its rows that no process holds go,
                    # and if any is left (held, or it made something meanwhile) this grid is refused
                    db.execute(f"DELETE FROM sweep_rows WHERE sweep = %s AND {MADE_NOTHING} AND {_UNHELD}",
                               (self.name,))
                    if db.execute("SELECT 1 FROM sweep_rows WHERE sweep = %s LIMIT 1", (self.name,)).fetchone():
                        raise another_grid(self.name, shown_location(self.url), count, len(keys))
                    db.execute("UPDATE sweeps SET digest = %s, row_count = %s WHERE name = %s",
                               (digest, len(keys), self.name))
                with db.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO sweep_rows (sweep, key, idx) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                        [(self.name, key, index) for index, key in enumerate(keys)])

        self._do(work)

    def check_grid(self, keys: Sequence[str]) -> None:
        """Refuse a grid other than the one the sweep recorded, unless that one made nothing (as
        ``register`` replaces it): JournalMismatchError; nothing is written."""
        recorded = self._do(lambda db: db.execute(
            "SELECT digest, row_count, EXISTS (SELECT 1 FROM sweep_rows WHERE sweep = %s AND "
            f"NOT ({MADE_NOTHING} AND {_UNHELD})) FROM sweeps WHERE name = %s", (self.name, self.name)).fetchone())
        if recorded is not None and recorded[0] != grid_digest(keys) and recorded[2]:
            raise another_grid(self.name, shown_location(self.url), recorded[1], len(keys))

    def bind(self, accounts: Sequence[tuple[str, str]]) -> None:
        """A sweep spans accounts: each row records the one that sent it (see ``claim``)."""

    def load(self) -> dict[str, RowRecord]:
        """Every row of the sweep, by key."""
        rows = self._do(lambda db: db.execute(f"SELECT {', '.join(FIELDS)} FROM sweep_rows WHERE sweep = %s"
                                              " ORDER BY idx", (self.name,)).fetchall())
        return {row[0]: RowRecord.from_row(row) for row in rows}

    def get(self, key: str) -> RowRecord:
        """One row (a fresh pending entry when unknown)."""
        row = self._do(lambda db: db.execute(f"SELECT {', '.join(FIELDS)} FROM sweep_rows WHERE sweep = %s"
                                             " AND key = %s", (self.name, key)).fetchone())
        return RowRecord.from_row(row) if row else RowRecord(key)

    def save(self, entry: RowRecord, fence: str | None = None) -> None:
        """Write ``entry`` (before a request goes out, and after each answer) and extend its lease, if
        the row is still this process's claim; else RowLost, and nothing is written. A done row is
        written only as done (the same write again, when its answer was lost in an outage).
        ``fence``: the account whose create lock this process must still hold (the write before an
        untagged create); the lock's lease is extended with the row's, and when another process took
        the lock the row goes back to the sweep, unwritten (RowLost)."""
        values = row_values(entry)
        assignments = ", ".join(f"{name} = %s" for name in FIELDS[1:])

        def work(db: Any) -> int:
            token = self._rows.get(entry.key)
            lock = None if fence is None else self._locks.get(fence, -1)
            if token is None:
                return 0
            # The lock's lease is extended in the same statement: both still held, or nothing written.
            written = db.execute(
                "WITH fence AS (UPDATE sweep_create_locks SET lease_until = now() + make_interval(secs => %s)"
                " WHERE account = %s AND owner = %s AND version = %s RETURNING 1)"
                f" UPDATE sweep_rows SET {assignments}, finished_at = CASE WHEN %s = 'done' THEN now() END,"
                " lease_until = now() + make_interval(secs => %s)"
                " WHERE sweep = %s AND key = %s AND owner = %s AND lease_version = %s AND (status != 'done' OR %s = 'done')"
                " AND (%s OR EXISTS (SELECT 1 FROM fence))",
                (self.lease, fence, self.owner, lock, *values[1:], entry.status, self.lease, self.name, entry.key,
                 self.owner, token, entry.status, fence is None)).rowcount
            if not written:
                if fence is not None and not self._lock_held(db, fence):
                    return -1
                self._rows.pop(entry.key, None)
            return int(written)

        written = self._do(work)
        if written < 0:
            self.release(entry.key, untried=True)
            raise RowLost(f"the create lock of {fence} was taken by another process while this one held it past its "
                          f"lease ({self.lease:g} s without renewal): row {entry.key} of the sweep {self.path} was not "
                          "sent, and goes back to the sweep")
        if not written:
            raise RowLost(f"row {entry.key} of the sweep {self.path} is not this process's any more: another "
                          f"took it when this one's lease ran out ({self.lease:g} s without renewal)")

    def _lock_held(self, db: Any, account: str) -> bool:
        """Whether this process still holds ``account``'s create lock, by the token it took it with
        (forgotten here when not)."""
        token = self._locks.get(account)
        held = token is not None and db.execute(
            "SELECT 1 FROM sweep_create_locks WHERE account = %s AND owner = %s AND version = %s",
            (account, self.owner, token)).fetchone() is not None
        if not held:
            self._locks.pop(account, None)
        return held

    def refile(self, entry: RowRecord) -> None:
        """Record where a done row's images are stored now (see ``Journal.refile``): no lease is
        needed, since every process that stores them writes the same files."""
        images = row_values(entry)[FIELDS.index("images")]
        self._do(lambda db: db.execute("UPDATE sweep_rows SET images = %s WHERE sweep = %s AND key = %s"
                                       " AND status = 'done'", (images, self.name, entry.key)))

    def max_image_id(self) -> int | None:
        """The highest image id any row holds."""
        ids = [i for entry in self.load().values() for i in entry.image_ids]
        return max(ids, default=None)

    def feed(self, rows: list[Row], options: RunOptions, bar: Any, state: RunState) -> Feed:
        """The sweep's rows, leased one at a time (a run of its own among the processes')."""
        return SharedFeed(rows, self, options, bar, state, run_id=uuid.uuid4().hex)

    # --- leases ---------------------------------------------------------------------------------

    def claim(self, accounts: Collection[str], run_id: str, retry_uncertain: bool = False,
              settling_only: bool = False) -> str | None:
        """Lease the next row this process may take: not done, not leased by a live process, not
        tried in this run, and (when a create of it is in doubt) of an account it holds;
        ``settling_only``: only such a row in doubt."""
        def work(db: Any) -> Any:
            row = db.execute(
                """UPDATE sweep_rows SET owner = %s, run_id = %s, lease_until = now() + make_interval(secs => %s),
                     lease_version = lease_version + 1
                   WHERE (sweep, key) = (
                     SELECT sweep, key FROM sweep_rows
                     WHERE sweep = %s AND status != 'done' AND (status != 'uncertain' OR %s)
                       AND (lease_until IS NULL OR lease_until < now()) AND run_id IS DISTINCT FROM %s
                       AND (status NOT IN ('sent', 'created') OR account = ANY(%s))
                       AND (status IN ('sent', 'created') OR NOT %s)
                     ORDER BY idx LIMIT 1 FOR UPDATE SKIP LOCKED)
                   RETURNING key, lease_version""",
                (self.owner, run_id, self.lease, self.name, retry_uncertain, run_id, list(accounts),
                 settling_only)).fetchone()
            if row is not None:
                self._rows[row[0]] = int(row[1])  # the claim's fencing token: every write names it
            return row

        row = self._do(work)
        return None if row is None else str(row[0])

    def others_working(self, run_id: str) -> int:
        """Rows still leased by other processes: their work may yet come back if one dies."""
        (count,) = self._do(lambda db: db.execute(
            "SELECT count(*) FROM sweep_rows WHERE sweep = %s AND status != 'done' AND lease_until >= now()"
            " AND owner != %s AND run_id IS DISTINCT FROM %s", (self.name, self.owner, run_id)).fetchone())
        return int(count)

    def release(self, key: str, untried: bool = False) -> None:
        """Give a row's lease back: it is done, or left for a later run, or ``untried`` (its runner's
        account could not pay), and then any runner may take it, in this run too."""
        def work(db: Any) -> None:
            if (token := self._rows.get(key)) is not None:
                db.execute("UPDATE sweep_rows SET owner = NULL, lease_until = NULL,"
                           " run_id = CASE WHEN %s THEN NULL ELSE run_id END"
                           " WHERE sweep = %s AND key = %s AND owner = %s AND lease_version = %s",
                           (untried, self.name, key, self.owner, token))
                del self._rows[key]

        self._do(work)

    def renew(self) -> None:
        """Extend every lease this process holds (rows and slots); a row or slot another process took
        meanwhile is no longer held (the row's next write is refused: RowLost)."""
        self._do(self._renew)

    def _renew(self, db: Any) -> None:
        renewing = time.monotonic()
        kept = {key for (key,) in db.execute(
            "UPDATE sweep_rows SET lease_until = now() + make_interval(secs => %s)"
            " WHERE owner = %s AND lease_until IS NOT NULL RETURNING key", (self.lease, self.owner))}
        for key in set(self._rows) - kept:
            del self._rows[key]
        self._slots &= {(account, int(slot)) for account, slot in db.execute(
            "UPDATE sweep_slots SET lease_until = now() + make_interval(secs => %s)"
            " WHERE owner = %s AND lease_until IS NOT NULL RETURNING account, slot", (self.lease, self.owner))}
        locks = dict(db.execute("UPDATE sweep_create_locks SET lease_until = now() + make_interval(secs => %s)"
                                " WHERE owner = %s AND lease_until IS NOT NULL RETURNING account, version",
                                (self.lease, self.owner)).fetchall())
        self._locks = {account: token for account, token in self._locks.items() if locks.get(account) == token}
        self._renewed = renewing

    def take_slot(self, account: str, limit: int) -> int | None:
        """One of ``account``'s ``limit`` slots, if one is free (held by no live process)."""
        def work(db: Any) -> Any:
            if (account, limit) not in self._slots_made:
                with db.cursor() as cursor:
                    cursor.executemany("INSERT INTO sweep_slots (account, slot) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                                       [(account, slot) for slot in range(limit)])
                self._slots_made.add((account, limit))
            return db.execute(
                """UPDATE sweep_slots SET owner = %s, lease_until = now() + make_interval(secs => %s)
                   WHERE (account, slot) = (
                     SELECT account, slot FROM sweep_slots WHERE account = %s AND slot < %s
                       AND (owner IS NULL OR lease_until < now()) ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED)
                   RETURNING slot""", (self.owner, self.lease, account, limit)).fetchone()

        row = self._do(work)
        if row is None:
            return None
        self._slots.add((account, int(row[0])))
        return int(row[0])

    def give_slot(self, account: str, slot: int) -> None:
        """Free a slot at once (the generation it held is over)."""
        self._do(lambda db: db.execute("UPDATE sweep_slots SET owner = NULL, lease_until = NULL WHERE account = %s"
                                       " AND slot = %s AND owner = %s", (account, slot, self.owner)))
        self._slots.discard((account, slot))

    def lock_account(self, account: str) -> bool:
        """Take ``account``'s create lock if no live process holds it: a lease, with a new fencing
        token (see the module), that runs out if this process dies or stops renewing it."""
        def work(db: Any) -> Any:
            if account not in self._locks_made:
                db.execute("INSERT INTO sweep_create_locks (account) VALUES (%s) ON CONFLICT DO NOTHING", (account,))
                self._locks_made.add(account)
            return db.execute(
                "UPDATE sweep_create_locks SET owner = %s, lease_until = now() + make_interval(secs => %s),"
                " version = version + 1 WHERE account = %s AND (owner IS NULL OR lease_until < now()) RETURNING version",
                (self.owner, self.lease, account)).fetchone()

        row = self._do(work)
        if row is not None:
            self._locks[account] = int(row[0])
        return row is not None

    def unlock_account(self, account: str) -> None:
        """Give ``account``'s create lock back (unless another process took it meanwhile)."""
        token = self._locks.pop(account, None)
        if token is not None:
            self._do(lambda db: db.execute("UPDATE sweep_create_locks SET owner = NULL, lease_until = NULL"
                                           " WHERE account = %s AND owner = %s AND version = %s",
                                           (account, self.owner, token)))

    # --- what a person asks -----------------------------------------------------------------------

    def progress(self) -> dict[str, int]:
        """Rows per state, the sweep's whole."""
        rows = self._do(lambda db: db.execute("SELECT status, count(*) FROM sweep_rows WHERE sweep = %s"
                                              " GROUP BY status", (self.name,)).fetchall())
        return {status: int(count) for status, count in rows}

    def status(self) -> dict[str, Any]:
        """Rows done, running (by whom), failed and left; credits spent; the pace of the last done."""
        def work(db: Any) -> tuple[Any, Any]:
            summary = db.execute(
                """SELECT count(*) FILTER (WHERE status = 'done'), count(*) FILTER (WHERE status = 'failed'),
                          count(*) FILTER (WHERE status = 'uncertain'), count(*),
                          COALESCE(sum(credits), 0), min(finished_at), max(finished_at)
                   FROM sweep_rows WHERE sweep = %s""", (self.name,)).fetchone()
            running = db.execute(
                "SELECT owner, count(*) FROM sweep_rows WHERE sweep = %s AND status != 'done'"
                " AND lease_until >= now() GROUP BY owner ORDER BY owner", (self.name,)).fetchall()
            return summary, running

        summary, running = self._do(work)
        done, failed, uncertain, total, credits, first, last = summary
        return {"done": done, "failed": failed, "uncertain": uncertain, "total": total, "credits": float(credits),
                "running": {owner: int(count) for owner, count in running}, "first_done": first, "last_done": last}

    def let_go(self) -> None:
        """Give back every lease and create lock this process holds: a run ends (cut short, perhaps),
        or one starts after a run cut short while the database was away."""
        def work(db: Any) -> None:
            for table in ("sweep_rows", "sweep_slots", "sweep_create_locks"):
                db.execute(f"UPDATE {table} SET owner = NULL, lease_until = NULL WHERE owner = %s", (self.owner,))

        self._do(work)
        self._rows.clear()
        self._slots.clear()
        self._locks.clear()

    def close(self) -> None:
        """Let go of everything this process holds (with the database away, the leases run out by
        themselves), and close the connection."""
        with suppress(JournalUnavailableError):
            self.let_go()
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class SharedFeed(Feed):
    """The rows of a sweep leased from its shared journal, one at a time."""

    def __init__(self, rows: list[Row], journal: SharedJournal, options: RunOptions, bar: Any, state: RunState,
                 run_id: str) -> None:
        super().__init__(state)
        self.journal, self.options, self.bar, self.run_id = journal, options, bar, run_id
        self._rows = {row.key: row for row in rows}
        journal.let_go()  # what an earlier run cut short still holds
        journal.register([row.key for row in rows])
        self.show_progress()

    async def next(self, account: str, settling_only: bool = False) -> Row | None:
        """The next row this process may take for ``account`` (see ``SharedJournal.claim``), or None
        when no row is left that it could take, now or once another lease runs out or a runner here
        gives one back."""
        while not self.state.stopped:
            key = await anyio.to_thread.run_sync(self.journal.claim, [account], self.run_id,
                                                 self.options.retry_uncertain, settling_only)
            if key is not None:
                return self._taken(self._rows[key])
            if not self.out and not await anyio.to_thread.run_sync(self.journal.others_working, self.run_id):
                return None
            await self._wait(self.WAIT)
        return None

    def finished(self, row: Row) -> None:
        """``row`` is over for this run: its lease goes back (the bar moves with the renewals)."""
        super().finished(row)
        self.journal.release(row.key)

    def give_back(self, row: Row) -> None:
        super().give_back(row)
        self.journal.release(row.key, untried=True)

    def show_progress(self) -> None:
        """The bar shows the sweep's rows done by every process."""
        done = self.journal.progress().get("done", 0)
        self.bar.update(done - self.bar.n)
