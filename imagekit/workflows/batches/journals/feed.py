"""Where a runner's next row comes from: a queue in this process (``LocalFeed``, beside the local
journal), or leases in a shared journal (``SharedFeed``, beside it).

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

import anyio

from ..rows import Row
from ..state import RunState

__all__ = ["Feed"]

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
