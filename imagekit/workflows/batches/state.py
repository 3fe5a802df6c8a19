"""What the runners of one run share: the credits spent and held, why new work stopped, which
accounts can still pay, and the rows another process took over."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RunState", "Hold"]


@dataclass
class RunState:
    """What the runners of one run share: the credits spent and held, and why it stopped."""

    spent: float = 0.0
    """Credits charged in this run, net of refunds (the balance change this run caused)."""
    reserved: float = 0.0
    """Credits set aside for creates between the budget check and their answer."""
    stopped: str | None = None
    """Why new work stopped (budget, balance, the service out of storage), if it did."""
    paying: int = 1
    """Accounts of the run (one per key) that have not run out of credit: when none is left, it stops."""
    lost: list[str] = field(default_factory=list)
    """Rows another process took over (this one's lease on them ran out): dropped here, finished there."""


class Hold:
    """Credits set aside in a run's ``reserved`` for a create between the budget check and its answer."""

    def __init__(self, state: RunState, cost: float) -> None:
        self.state, self.cost, self.held = state, cost, True
        state.reserved += cost

    def release(self) -> None:
        if self.held:
            self.state.reserved -= self.cost
            self.held = False
