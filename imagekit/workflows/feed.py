"""Where a runner's next row comes from: a queue in this process, or leases in a shared journal.

Every runner of a batch (one per key) asks its feed for the next row and tells it when a row is
over, or gives it back for another key when its own account cannot pay for it. A local feed hands
out the rows a SQLite (or in-memory) journal has not finished. A shared feed leases them from a
sweep's journal in PostgreSQL; when none is free it waits while other processes still hold rows
(one may die, and its rows come back when its lease runs out), and the progress bar counts what
every process has done. Either waits, too, while this process's other runners hold rows: one may
give its rows back.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any

import anyio

from .options import RunOptions
from .rows import Row
from .state import RunState

if TYPE_CHECKING:
    from .local_journal import LocalJournal
    from .shared_journal import SharedJournal

__all__ = ["LocalFeed", "SharedFeed", "Feed"]

log = logging.getLogger("imagekit")


class Feed:
    """A runner's source of rows. It counts the rows this process's runners hold: while any is out, a
    runner with nothing to take waits, since the row may be given back."""

    WAIT = 0.25
    """Seconds between looks for a row another process may free."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.out = 0
        self._moved: anyio.Event | None = None

    def _taken(self, row: Row) -> Row:
        self.out += 1
        return row

    async def _wait(self, seconds: float | None = None) -> None:
        """Until a runner here finishes a row or gives one back (or ``seconds`` pass)."""
        self._moved = self._moved or anyio.Event()
        with anyio.move_on_after(seconds):
            await self._moved.wait()

    def _returned(self) -> None:
        self.out -= 1
        if self._moved is not None:
            self._moved.set()
            self._moved = None

    def finished(self, row: Row) -> None:
        """``row`` is over for this run."""
        self._returned()

    def give_back(self, row: Row) -> None:
        """``row`` was not sent (its runner's account cannot pay): another runner may take it."""
        self._returned()

    def lost(self, row: Row, why: str) -> None:
        """``row`` is not this process's any more (the journal refused a write of it): dropped, said
        once, and counted in the run's ``lost``, not as failed; its lease is the other process's."""
        self._returned()
        self.state.lost.append(row.key)
        log.warning("imagekit: %s; this process dropped it, the other finishes it", why)

    async def next(self, account: str, settling_only: bool = False) -> Row | None:
        """The next row ``account``'s runner may take (``settling_only``: only a row in doubt that it
        alone can settle), or None when there is none left for it."""
        raise NotImplementedError

    def show_progress(self) -> None:
        """Bring the progress bar up to date with work other processes did (none here)."""


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

