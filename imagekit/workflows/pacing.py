"""When to poll a PENDING generation: learned from how long generations take, so the first poll
lands just after the images are done and a slot is never held idle waiting for a late poll.

Each settled generation gives a bracket on its duration: it was still PENDING at the last poll
that said so, and done by the poll that saw it done. The duration is learned from the bracket's
middle. A generation the *first* poll already found done gives only an upper bound (it may have
finished long before), so the estimate is nudged down until a first poll sees PENDING again; an
estimate that learned only from the moments its own polls landed would never come down.
"""

from __future__ import annotations

__all__ = ["Pace"]


class Pace:
    """The learned duration of a generation, counted from its create's answer."""

    def __init__(self, poll_interval: float) -> None:
        self.poll_interval = poll_interval
        """Shortest pause between two polls of one generation."""
        self.duration: float | None = None
        """Seconds a generation takes, learned; None until one has been seen."""

    def first_poll(self) -> float:
        """Seconds after the answer to poll first (at once until something is learned)."""
        return self.duration or 0.0

    def interval(self) -> float:
        """Pause between polls once a generation is due: slow generations are polled less often."""
        return max(self.poll_interval, (self.duration or 0.0) / 10)

    def learn(self, pending_at: float | None, done_at: float) -> None:
        """A generation seen PENDING ``pending_at`` seconds after its answer (None: never, the first
        poll found it done) and done ``done_at`` seconds after it (when that poll was sent)."""
        if pending_at is None:
            upper = done_at if self.duration is None else min(done_at, self.duration)
            self.duration = max(0.0, upper - max(self.poll_interval, 0.05 * upper))
        else:
            middle = (pending_at + done_at) / 2
            self.duration = middle if self.duration is None else 0.5 * self.duration + 0.5 * middle
