"""How a batch runs: the settings ``Batch.run`` takes and the runner, the probe and the pacing read."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import ConfigError

if TYPE_CHECKING:
    from ...storage import Store

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
    spent_before: float = 0.0
    """Credits earlier runs spent against ``budget`` (a sweep file's budget covers all its runs)."""
    lease: float = 30.0
    """In a shared journal (PostgreSQL), seconds a process's hold on a row or a slot lasts without
    renewal: a process that dies gives its rows back to the others this long after."""

    def __post_init__(self) -> None:
        """Each number is refused in one line when it cannot mean what it says (inf, NaN, below 0)."""
        for name, lowest, allow_none in (("budget", 0.0, True), ("timeout", 0.0, False), ("lease", 0.0, False),
                                         ("settle_delay", 0.0, False), ("poll_interval", 0.0, False)):
            value = getattr(self, name)
            if value is None and allow_none:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value < lowest or (name in ("timeout", "lease") and value == 0):
                raise ConfigError(f"{name}={value!r}: give a finite number of "
                                  f"{'credits' if name == 'budget' else 'seconds'}, "
                                  f"{'above 0' if name in ('timeout', 'lease') else 'at least 0'}")
        for name in ("concurrency", "probe_window", "probe_reads"):
            value = getattr(self, name)
            if value is None and name == "concurrency":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name}={value!r}: give a whole number, at least 1")
