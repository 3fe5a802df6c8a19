"""Where a runner's next row comes from: a queue in this process, or leases in a shared journal.

Every runner of a batch (one per key) asks its feed for the next row and tells it when a row is
over. A local feed hands out the rows a SQLite (or in-memory) journal has not finished. A shared
feed leases them from a sweep's journal in PostgreSQL; when none is free it waits while other
processes still hold rows (one may die, and its rows come back when its lease runs out), and the
progress bar counts what every process has done.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import anyio

from .journal import Journal
from .options import RunOptions
from .rows import Row
from .shared_journal import SharedJournal

__all__ = ["RunState", "LocalFeed", "SharedFeed", "Feed"]


@dataclass
class RunState:
    """What the runners of one run share: the credits spent and held, and why it stopped."""

    spent: float = 0.0
    """Credits charged in this run, net of refunds (the balance change this run caused)."""
    reserved: float = 0.0
    """Credits set aside for creates between the budget check and their answer."""
    stopped: str | None = None
    """Why new work stopped (budget, balance), if it did."""


class LocalFeed:
    """The rows of this process's journal that are not finished, one at a time."""

    def __init__(self, rows: list[Row], journal: Journal, options: RunOptions, bar: Any, state: RunState) -> None:
        entries = journal.load()
        self.bar, self.state = bar, state
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

    async def next(self, account: str) -> Row | None:
        """The next row ``account``'s runner may take, or None when there is none left."""
        for index, row in enumerate(self._todo):
            if self._in_doubt.get(row.key, account) == account:
                del self._todo[index]
                return row
        return None

    def finished(self, row: Row) -> None:
        """``row`` is over for this run."""
        self.bar.update(1)


class SharedFeed:
    """The rows of a sweep leased from its shared journal, one at a time."""

    WAIT = 0.25
    """Seconds between looks for a free row while other processes hold the rest."""

    def __init__(self, rows: list[Row], journal: SharedJournal, options: RunOptions, bar: Any, state: RunState,
                 run_id: str) -> None:
        self.journal, self.options, self.bar, self.state, self.run_id = journal, options, bar, state, run_id
        self._rows = {row.key: row for row in rows}
        journal.register([row.key for row in rows])
        self.show_progress()

    async def next(self, account: str) -> Row | None:
        """The next row this process may take (see ``SharedJournal.claim``), or None when no row is
        left that it could take, now or once another process's lease runs out."""
        while not self.state.stopped:
            key = await anyio.to_thread.run_sync(self.journal.claim, [account], self.run_id,
                                                 self.options.retry_uncertain)
            if key is not None:
                return self._rows[key]
            if not await anyio.to_thread.run_sync(self.journal.others_working, self.run_id):
                return None
            await anyio.sleep(self.WAIT)
        return None

    def finished(self, row: Row) -> None:
        """``row`` is over for this run: its lease goes back (the bar moves with the renewals)."""
        self.journal.release(row.key)

    def show_progress(self) -> None:
        """The bar shows the sweep's rows done by every process."""
        done = self.journal.progress().get("done", 0)
        self.bar.update(done - self.bar.n)


Feed = LocalFeed | SharedFeed
"""A runner's source of rows."""
