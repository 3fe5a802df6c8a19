"""Requests made by Ray tasks (the ``ray`` extra).

Ray runs a task again only when asked (``max_retries``): these tasks are never run again, and a
create's ticket is kept by a small actor of the run (``Tickets``), which a task asks before sending
and the caller asks back when it gives the task up (its worker killed or paused: the task is then
cancelled, its worker process killed).
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import anyio

from ..errors import ConfigError
from ..extras import require
from . import EngineLost, new_ticket
from .task import Incoming, Outgoing, send

__all__ = ["RayEngine"]


class Tickets:
    """The tickets of a run's creates not yet sent (a Ray actor: one call at a time)."""

    def __init__(self) -> None:
        self.waiting: set[str] = set()

    def offer(self, ticket: str) -> None:
        self.waiting.add(ticket)

    def take(self, ticket: str) -> bool:
        """True for the first taker only."""
        if ticket in self.waiting:
            self.waiting.discard(ticket)
            return True
        return False


class RayClaim:
    """A task's take of its ticket (picklable: it goes with the task)."""

    def __init__(self, tickets: Any, ticket: str) -> None:
        self.tickets, self.ticket = tickets, ticket

    def __call__(self) -> bool:
        import ray

        return bool(ray.get(self.tickets.take.remote(self.ticket)))


class RayEngine:
    """Requests sent as Ray tasks."""

    name = "ray"

    def __init__(self, owned: bool) -> None:
        import ray

        self.owned = owned
        self.tickets: Any = ray.remote(num_cpus=0)(Tickets).remote()
        self.task: Any = ray.remote(max_retries=0, num_cpus=0.25)(send)

    @classmethod
    def connect(cls, address: str | None) -> RayEngine:
        """Ray as this process already joined it; else ``ray.init(address)`` (a local Ray when none)."""
        ray = require("ray")
        if ray.is_initialized():
            if address is not None:
                raise ConfigError("this process has joined Ray already: leave address out, or ray.shutdown() first")
            return cls(owned=False)
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ConfigError(f"no Ray cluster answers at {address!r}: check the address (host:6379, or "
                              f"ray://host:10001) and that the cluster runs ({str(exc).splitlines()[0]})") from None
        return cls(owned=True)

    async def send(self, outgoing: Outgoing, once: bool, wait: float) -> Incoming:
        import ray

        ticket = new_ticket() if once else None
        if ticket is not None:
            try:
                await self.tickets.offer.remote(ticket)
            except Exception as exc:
                raise EngineLost(f"the ticket was not kept ({type(exc).__name__})", sent=False) from None
        ref = self.task.remote(outgoing, RayClaim(self.tickets, ticket) if ticket is not None else None)
        try:
            with anyio.fail_after(wait):
                result: Incoming = await ref
            return result
        except Exception as exc:
            with suppress(Exception):
                ray.cancel(ref, force=True)
            took_back = False
            if ticket is not None:
                with suppress(Exception):
                    took_back = bool(await self.tickets.take.remote(ticket))
            raise EngineLost(f"task lost ({type(exc).__name__})", sent=not took_back) from None

    def close(self) -> None:
        import ray

        with suppress(Exception):
            ray.kill(self.tickets)
        if self.owned:
            ray.shutdown()
