"""When to poll a PENDING generation: learned from how long generations take, so the first poll
lands just after the images are done and a slot is never held idle waiting for a late poll.

Times count from the moment the create was sent: the service's generation time runs from the
request's arrival, while the answer's own time varies with the service's load.

A first poll that comes too early costs a second poll (a round trip and a pause); one that comes
late costs only its lateness. So the first poll aims at a high share of the ends (``ON_TIME``), not
at their middle: each early first poll moves the aim later (at least to the middle of the bracket
its polls put around the end), each late one moves it a little earlier. Late ones in a row move it
faster and faster, so an aim learned while the service was slow comes down within a few rows.
"""

from __future__ import annotations

__all__ = ["Pace"]

ON_TIME = 0.75
"""The share of first polls that should find the generation done."""
STEP = 0.03
"""How far one poll moves the aim, as a share of the aim."""
LATE_RUN = 8
"""Late first polls in a row (unlikely while the aim is right) after which each further one moves
the aim twice as far."""


class Pace:
    """When to poll a generation, counted from the moment its create was sent."""

    def __init__(self, poll_interval: float) -> None:
        self.poll_interval = poll_interval
        """Shortest pause between two polls of one generation."""
        self.due: float | None = None
        """Seconds after the create to poll first, learned; None until a generation was seen."""
        self._late_run = 0

    def first_poll(self) -> float:
        """Seconds after the create to poll first (at once until something is learned)."""
        return self.due or 0.0

    def interval(self) -> float:
        """Pause between polls once a generation is due: slow generations are polled less often."""
        return max(self.poll_interval, (self.due or 0.0) / 50)

    def learn(self, pending_at: float | None, done_at: float) -> None:
        """A generation seen PENDING by the poll sent ``pending_at`` seconds after its create (None:
        never, the first poll found it done) and done by the poll sent ``done_at`` seconds after."""
        if self.due is None:
            self.due = done_at if pending_at is None else (pending_at + done_at) / 2
            return
        step = STEP * self.due
        if pending_at is None:  # on time or late: by how much is unknown, so come earlier a little
            self._late_run += 1
            speedup = min(2 ** max(0, self._late_run - LATE_RUN), 64)
            self.due = max(0.0, self.due - (1 - ON_TIME) * step * speedup)
        else:  # early: the end lies between the two polls
            self._late_run = 0
            self.due = max(self.due + ON_TIME * step, (pending_at + done_at) / 2)
