"""A concurrency window that shrinks when the service refuses and grows back as work succeeds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

__all__ = ["Window"]


class Window:
    """At most ``limit`` holders at once; ``limit`` moves between 1 and ``cap``: one narrower at each
    refusal, one wider after a streak of successes. (Halving, as TCP does, starves a batch when a
    service refuses a steady share of requests for reasons of its own.)"""

    def __init__(self, cap: int, grow_after: int = 2) -> None:
        self.cap = max(1, cap)
        self.limit = self.cap
        self.in_use = 0
        self.lowest = self.limit
        """The smallest limit reached (for reports and tests)."""
        self._grow_after, self._streak = grow_after, 0
        self._changed = anyio.Condition()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one place in the window."""
        async with self._changed:
            while self.in_use >= self.limit:
                await self._changed.wait()
            self.in_use += 1
        try:
            yield
        finally:
            async with self._changed:
                self.in_use -= 1
                self._changed.notify_all()

    def refused(self) -> None:
        """The service refused (429/503): narrow the window."""
        self.limit = max(1, self.limit - 1)
        self.lowest = min(self.lowest, self.limit)
        self._streak = 0

    async def succeeded(self) -> None:
        """One more success: widen the window by one after a streak of them."""
        self._streak += 1
        if self._streak >= self._grow_after and self.limit < self.cap:
            self.limit, self._streak = self.limit + 1, 0
            async with self._changed:
                self._changed.notify_all()
