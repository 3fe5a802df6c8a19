"""Keeping a run's leases: while its runners work, the journal's holds are renewed (a third of the
lease at a time) and the progress bar follows what every process has done."""

from __future__ import annotations

import anyio

from .feed import Feed, SharedFeed
from .runner import Runner
from .shared_journal import SharedJournal

__all__ = ["keep_leases"]


async def keep_leases(journal: SharedJournal, feed: Feed, runners: list[Runner]) -> None:
    """While the runners work: renew this process's leases and show the sweep's progress; ends
    when they do."""
    pause = min(1.0, journal.lease / 3)
    while any(runner.working for runner in runners):
        await anyio.sleep(pause)
        await anyio.to_thread.run_sync(journal.renew)
        if isinstance(feed, SharedFeed):
            await anyio.to_thread.run_sync(feed.show_progress)
