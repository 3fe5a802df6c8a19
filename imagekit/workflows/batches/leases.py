"""Keeping a run's leases: while its runners work, the journal's holds are renewed (a third of the
lease at a time) and the progress bar follows what every process has done."""

from __future__ import annotations

import anyio

from .journals.feed import Feed
from .journals.journal import Journal

__all__ = ["keep_leases"]


async def keep_leases(journal: Journal, feed: Feed) -> None:
    """Renew this process's leases and show the sweep's progress, until cancelled (the runners are done)."""
    pause = min(1.0, journal.lease / 3)
    while True:
        await anyio.sleep(pause)
        await anyio.to_thread.run_sync(journal.renew)
        await anyio.to_thread.run_sync(feed.show_progress)
