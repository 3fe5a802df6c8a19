"""How a batch runs: the settings ``Batch.run`` takes and the runner, the probe and the pacing read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..storage import Store

__all__ = ["RunOptions"]


@dataclass
class RunOptions:
    """How a batch runs."""

    budget: float | None = None
    """Credits this run may spend; new work stops before it would pass it."""
    concurrency: int | None = None
    """Generations at once; default and ceiling: the plan's simultaneousLimit."""
    progress: bool = True
    out_dir: Store | None = None
    """Where images go as they arrive (``Batch.run``'s ``out_dir``)."""
    retry_uncertain: bool = False
    """Send rows left ``uncertain`` again (may charge them twice)."""
    settle_delay: float = 0.5
    """Seconds to let a dropped create finish on the server before probing for its images."""
    probe_window: int = 32
    """Consecutive ids that are not the caller's after which the probe concludes nothing ran."""
    probe_reads: int = 6
    """Attempts at each probe read (one call, retried by the client's policy this many times in
    all) before the row is left uncertain."""
    poll_interval: float = 0.01
    """Shortest pause between status polls once a generation is due (the first poll waits until
    then, see ``pacing``); slow generations are polled less often, at a fiftieth of their duration."""
    timeout: float = 600.0
    """Seconds a generation may stay PENDING."""
    lease: float = 30.0
    """In a shared journal (PostgreSQL), seconds a process's hold on a row or a slot lasts without
    renewal: a process that dies gives its rows back to the others this long after."""
