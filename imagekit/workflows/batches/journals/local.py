"""A batch's journal in a SQLite file: one process records each request before it is sent and each
result after.

Every write commits on its own (WAL), so a ``kill -9`` loses nothing written.

A journal is bound to the account it was first run against (``bind``): its rows name images of that
account only, so a run against another service, user or sandbox is refused rather than "resumed".
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...._sqlite import open_wal
from ....errors import JournalMismatchError, StorageUnavailableError
from ..options import RunOptions
from ..rows import Row
from ..state import RunState
from .feed import Feed
from .journal import FIELDS, MADE_NOTHING, RowLost, RowRecord, another_grid, grid_digest, row_values

__all__ = ["LocalJournal", "LocalFeed"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    group_id TEXT, low_id INTEGER, sent_at REAL, images TEXT NOT NULL DEFAULT '[]',
    credits REAL, error TEXT, latency REAL, account TEXT
);
CREATE TABLE IF NOT EXISTS binding (account TEXT NOT NULL, described TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sweep (name TEXT NOT NULL, digest TEXT, row_count INTEGER);
"""
TABLES = ("rows", "binding", "sweep", "review_events")
"""The tables a journal file holds (``_SCHEMA``, and the decisions a review desk keeps with the batch)."""
_ASSIGN = ", ".join(f"{name} = excluded.{name}" for name in FIELDS[1:])
_DISK_FAILURES = (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN)


class LocalJournal:
    """Row states of one batch in a SQLite file (``":memory:"`` for a run that need not resume), for
    one process: it leases nothing, so the lease half of ``Journal`` answers at once."""

    def __init__(self, path: str | Path = ":memory:", name: str = "") -> None:
        self.path = self.location = str(path)
        self.name = name
        """The batch's name (a sweep's), recorded by the first run that has one."""
        self.lease = math.inf
        self._lock = threading.Lock()
        with self._writing():
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # WAL without an fsync per commit: an entry survives a kill -9 (what the journal promises),
            # and a spec-exact batch, whose creates go one at a time, waits for no disk.
            self._db = (sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                        if self.path == ":memory:" else open_wal(self.path, "a journal", TABLES))
            self._db.executescript(_SCHEMA)
            if "account" not in {row[1] for row in self._db.execute("PRAGMA table_info(rows)")}:
                self._db.execute("ALTER TABLE rows ADD COLUMN account TEXT")  # a journal from before shared sweeps
            if "digest" not in {row[1] for row in self._db.execute("PRAGMA table_info(sweep)")}:
                # a journal from before grids were kept: the next run's grid is taken as its own
                self._db.execute("ALTER TABLE sweep ADD COLUMN digest TEXT")
                self._db.execute("ALTER TABLE sweep ADD COLUMN row_count INTEGER")

    def __repr__(self) -> str:
        return f"LocalJournal({self.path!r})"

    def bind(self, accounts: Sequence[tuple[str, str]]) -> None:
        """Tie the journal to the accounts it runs for (``(identity, description)`` pairs, see
        ``account_identity``): the first run records them, a run with an account not among them
        raises JournalMismatchError, saying which each is."""
        with self._lock:
            bound = dict(self._db.execute("SELECT account, described FROM binding").fetchall())
            if not bound:
                self._db.executemany("INSERT INTO binding VALUES (?, ?)", accounts)
            if self.name and self.recorded_name() is None:
                self._db.execute("INSERT INTO sweep (name) VALUES (?)", (self.name,))
        stranger = next((described for identity, described in accounts if bound and identity not in bound), None)
        if stranger is not None:
            raise JournalMismatchError(
                f"The journal {self.path} was written against {' and '.join(bound.values())}, not {stranger}: its rows "
                "name another account's images. Pass another journal file, or delete this one to start over.")

    def recorded_name(self) -> str | None:
        """The name of the batch (the sweep) this journal was first run for, if it had one."""
        row = self._db.execute("SELECT name FROM sweep").fetchone()
        return row[0] if row else None

    def load(self) -> dict[str, RowRecord]:
        """Every row the journal knows, by key."""
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(FIELDS)} FROM rows").fetchall()
        return {row[0]: RowRecord.from_row(row) for row in rows}

    def get(self, key: str) -> RowRecord:
        """One row (a fresh pending entry when unknown)."""
        with self._lock:
            row = self._db.execute(f"SELECT {', '.join(FIELDS)} FROM rows WHERE key = ?", (key,)).fetchone()
        return RowRecord.from_row(row) if row else RowRecord(key)

    def save(self, entry: RowRecord, fence: str | None = None) -> None:
        """Write ``entry`` durably (before a request goes out, and after each answer); a done row is
        never written back to another state (RowLost). ``fence`` is for journals processes share:
        this process alone holds the create locks."""
        with self._lock, self._writing():
            written = self._db.execute(
                f"INSERT INTO rows ({', '.join(FIELDS)}) VALUES ({', '.join('?' * len(FIELDS))}) "
                f"ON CONFLICT (key) DO UPDATE SET {_ASSIGN} WHERE rows.status != 'done' OR excluded.status = 'done'",
                row_values(entry)).rowcount
        if not written:
            raise RowLost(f"row {entry.key} of the journal {self.path} is done already")

    def refile(self, entry: RowRecord) -> None:
        """Record where a done row's images are stored now (see ``Journal.refile``)."""
        with self._lock, self._writing():
            self._db.execute("UPDATE rows SET images = ? WHERE key = ? AND status = 'done'",
                             (row_values(entry)[FIELDS.index("images")], entry.key))

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A disk that cannot take the journal's write (full, read-only, gone) is StorageUnavailableError:
        the write did not happen, and what the journal held stays as it was (SQLite rolls it back)."""
        try:
            yield
        except (sqlite3.OperationalError, OSError) as exc:
            code = getattr(exc, "sqlite_errorcode", None)
            if isinstance(exc, sqlite3.OperationalError) and (code is None or code & 0xFF not in _DISK_FAILURES):
                raise
            reason = "its disk is full" if code is not None and code & 0xFF == sqlite3.SQLITE_FULL else str(exc)
            raise StorageUnavailableError(
                f"the journal {self.path} could not be written: {reason}; free space and run again "
                "(what was paid for is kept: nothing is paid twice)") from exc

    def status(self) -> dict[str, Any]:
        """Rows done, failed, uncertain, unsettled (sent or made when a run stopped: the next run settles
        them, and they may have been charged) and in all, and credits spent (as ``SharedJournal.status``
        answers; one process runs a local journal, so nothing is running when another reads it)."""
        with self._lock:
            done, failed, uncertain, unsettled, total, credits = self._db.execute(
                "SELECT count(*) FILTER (WHERE status = 'done'), count(*) FILTER (WHERE status = 'failed'), "
                "count(*) FILTER (WHERE status = 'uncertain'), count(*) FILTER (WHERE status IN ('sent', 'created')), "
                "count(*), COALESCE(sum(credits), 0) FROM rows").fetchone()
        return {"done": done, "failed": failed, "uncertain": uncertain, "unsettled": unsettled, "total": total,
                "credits": float(credits), "running": {}, "first_done": None, "last_done": None}

    def max_image_id(self) -> int | None:
        """The highest image id any row holds."""
        ids = [i for entry in self.load().values() for i in entry.image_ids]
        return max(ids, default=None)

    def register(self, keys: Sequence[str]) -> None:
        """Make the batch's rows (once), pending until tried, so that ``status`` counts the whole
        batch. A named batch (a sweep) keeps its grid: another grid under its name is refused, as a
        shared journal refuses it; an unnamed one may grow, running only its new rows."""
        with self._lock, self._writing():
            self._db.execute("BEGIN")  # one transaction, not one per row
            try:
                if self.name:
                    self._keep_grid(keys)
                self._db.executemany("INSERT INTO rows (key, status) VALUES (?, 'pending') ON CONFLICT (key) DO NOTHING",
                                     [(key,) for key in keys])
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _keep_grid(self, keys: Sequence[str]) -> None:
        self._db.execute("INSERT INTO sweep (name) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM sweep)", (self.name,))
        recorded = self._db.execute("SELECT digest FROM sweep WHERE name = ?", (self.name,)).fetchone()
        if recorded is not None and recorded[0] not in (None, grid_digest(keys)) and self._grid_made_nothing():
            self._db.execute("DELETE FROM rows")  # its every row failed before anything was made: this grid replaces it
            self._db.execute("UPDATE sweep SET digest = NULL WHERE name = ?", (self.name,))
        self._db.execute("UPDATE sweep SET digest = ?, row_count = ? WHERE name = ? AND digest IS NULL",
                         (grid_digest(keys), len(keys), self.name))
        self._refuse_another_grid(keys)

    def _grid_made_nothing(self) -> bool:
        """The recorded grid holds nothing (``MADE_NOTHING``, every row): it may give way to another."""
        return not self._db.execute(f"SELECT EXISTS (SELECT 1 FROM rows WHERE NOT ({MADE_NOTHING}))").fetchone()[0]

    def check_grid(self, keys: Sequence[str]) -> None:
        """Refuse a grid other than the one the sweep recorded (unless that one made nothing, as
        ``register`` then replaces it), or another sweep's journal (JournalMismatchError); nothing
        is written."""
        if self.name:
            with self._lock:
                self._refuse_another_grid(keys)

    def _refuse_another_grid(self, keys: Sequence[str]) -> None:
        recorded = self.recorded_name()
        if recorded is not None and recorded != self.name:  # a file holds one sweep: counts never mix
            raise JournalMismatchError(f"The journal {self.path} holds the sweep {recorded!r}, not {self.name!r}: "
                                       "give this sweep a journal file of its own.")
        known = self._db.execute("SELECT digest, row_count FROM sweep WHERE name = ?", (self.name,)).fetchone()
        if known is not None and known[0] is not None and known[0] != grid_digest(keys) \
                and not self._grid_made_nothing():
            raise another_grid(self.name, self.path, known[1], len(keys))

    def feed(self, rows: list[Row], options: RunOptions, bar: Any, state: RunState) -> Feed:
        """The rows not finished, one at a time (every row registered first)."""
        self.register([row.key for row in rows])
        return LocalFeed(rows, self, options, bar, state)

    def renew(self) -> None:
        """Nothing to renew: no other process takes these rows."""

    def take_slot(self, account: str, limit: int) -> int | None:
        """Always slot 0: the runner's own window keeps within the limit."""
        return 0

    def give_slot(self, account: str, slot: int) -> None:
        """Nothing to give: slots are the runner's window alone."""

    def lock_account(self, account: str) -> bool:
        """Always taken: the runner's own lock serializes this process's creates."""
        return True

    def unlock_account(self, account: str) -> None:
        """Nothing to give back."""

    def let_go(self) -> None:
        """Nothing is held."""

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()


UNSETTLED = frozenset({"pending", "skipped", "sent", "created"})
"""Row states a run can leave that the next run takes up again."""


class LocalFeed(Feed):
    """The rows of this process's journal that are not finished, one at a time."""

    def __init__(self, rows: list[Row], journal: LocalJournal, options: RunOptions, bar: Any, state: RunState) -> None:
        super().__init__(state)
        entries = journal.load()
        self.bar, self.journal, self.keys = bar, journal, {row.key for row in rows}
        self._todo: deque[Row] = deque()
        self._in_doubt = {key: entry.account for key, entry in entries.items()
                          if entry.status in ("sent", "created") and entry.account}
        """Rows a crash left in doubt, and the account that alone can settle each."""
        for row in rows:
            status = entries[row.key].status if row.key in entries else "pending"
            if status == "done" or (status == "uncertain" and not options.retry_uncertain):
                bar.update(1)
            else:
                self._todo.append(row)

    async def next(self, account: str, settling_only: bool = False) -> Row | None:
        while True:
            for index, row in enumerate(self._todo):
                owner = self._in_doubt.get(row.key)
                if owner == account or (owner is None and not settling_only):
                    del self._todo[index]
                    return self._taken(row)
            if not self.out:
                return None
            await self._wait()

    def finished(self, row: Row) -> None:
        super().finished(row)
        if not self.state.stopped:  # once stopped most rows end skipped: the bar then follows the journal
            self.bar.update(1)

    def show_progress(self) -> None:
        """After a stop (Ctrl+C, the budget), the bar shows the rows this run's journal holds as
        settled, not the rows skipped on the way out."""
        if self.state.stopped:
            settled = sum(entry.status not in UNSETTLED for key, entry in self.journal.load().items() if key in self.keys)
            self.bar.update(settled - self.bar.n)

    def give_back(self, row: Row) -> None:
        super().give_back(row)
        self._in_doubt.pop(row.key, None)  # settled as never run: any account may send it
        self._todo.appendleft(row)
