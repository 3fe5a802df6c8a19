"""Engines: a batch's requests made by the tasks of a Dask cluster or of Ray, its books kept here.

The process that runs the batch keeps the journal, the ledger, the budget, the progress and the
window of the account's slots, and decides what is sent, exactly as in a local run: it never has
more requests of an account in flight than its plan's ``simultaneousLimit``, so the cluster,
however large, cannot overbook it. Only the sending moves: the batch's client goes through an
``EngineTransport``, which hands each HTTP request to a task on the engine (``task.send``) and reads
its answer back. A worker needs imagekit installed and nothing else: it holds no journal, no
ledger and no credentials but the request's own headers.

A task lost to the engine costs nothing twice:

- a create goes with a ticket the engine keeps (on Dask, an item of a scheduler's queue; on Ray, an
  entry of a small actor of the run): a task sends its request only after
  taking the ticket, so a task the engine runs again (its worker killed, its retry) finds it taken
  and sends nothing;
- a task that does not answer in its request's time (its worker killed, paused, the scheduler gone)
  is given up: if the ticket is still there, the caller takes it back and the request certainly
  never left (sent again as a request that could not connect); otherwise it may have run, and the
  batch settles it by looking (``workflows.probe``), as it does a lost answer in a local run;
- the looking waits ``task.CLAIM_PATIENCE`` first, and a task sends only when its take of the ticket
  lasted less than that by its worker's own clock: a worker paused while taking it (SIGSTOP, a long
  GC) sends nothing when it wakes, so it cannot make the request after the batch looked and sent it
  again. What is left is a worker stopped in the moment its request is on its way (after that
  check, before its last byte): the interface has no idempotency key for the service to refuse a
  late one.

``engine_for`` turns ``Batch.run``'s ``engine``/``address`` into an ``Engine``; ``on_dask`` and
``on_ray`` load only when used (the ``dask`` and ``ray`` extras).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import httpx

from ..errors import ConfigError
from .task import Incoming, Outgoing

__all__ = ["Engine", "EngineLost", "EngineTransport", "engine_for", "ENGINES", "new_ticket"]

T = TypeVar("T")

ENGINES = ("local", "dask", "ray")
"""What ``Batch.run(engine=...)`` and ``imagekit sweep run --engine`` take."""
GRACE = 5.0
"""Seconds a task may take beyond its request's own timeout before it is given up (its start on a
busy worker, the answer's way back)."""


class EngineLost(Exception):
    """A task gave no answer. ``sent``: False when its request certainly never left (its ticket was
    taken back), True when it may have run (a task took the ticket, or the request is a read)."""

    def __init__(self, message: str, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


class Engine(Protocol):
    """Where requests are sent from (a Dask cluster, Ray)."""

    name: str

    async def send(self, outgoing: Outgoing, once: bool, wait: float) -> Incoming:
        """``outgoing`` sent by a task, its answer back within ``wait`` seconds, or EngineLost.
        ``once``: the request must not run twice (a create), so it goes with a ticket."""
        ...

    async def call(self, function: Callable[..., T], *args: Any, wait: float) -> T:
        """``function(*args)`` run by a task, its result back within ``wait`` seconds, or EngineLost:
        for work that may run twice (it goes with no ticket), such as storing an image."""
        ...

    def close(self) -> None:
        """Let go of what this process opened (a client) and nothing else."""


def new_ticket() -> str:
    """A name for one request's ticket, unique across runs and machines."""
    return f"imagekit-{uuid.uuid4().hex}"


def engine_for(engine: Any, address: str | None = None) -> Engine | None:
    """The Engine ``Batch.run(engine=..., address=...)`` names: None for a local run; ``"dask"``
    (a ``distributed.Client`` of the given ``address``, else the one already made in this process)
    or a ``distributed.Client``; ``"ray"`` (Ray as this process joined it, else ``ray.init(address)``:
    a local Ray when there is none). Refused in one line: another name, an address that does not
    answer, a missing extra."""
    if engine is None or engine == "local":
        if address is not None:
            raise ConfigError(f"address={address!r} is for an engine: give engine='dask' too")
        return None
    if engine == "dask" or type(engine).__module__.startswith("distributed"):
        from .on_dask import DaskEngine

        return DaskEngine.connect(engine if engine != "dask" else None, address)
    if engine == "ray":
        from .on_ray import RayEngine

        return RayEngine.connect(address)
    raise ConfigError(f"engine={engine!r}: give one of {', '.join(repr(name) for name in ENGINES)}, "
                      "or a distributed.Client")


class EngineTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose requests are made by the engine's tasks (see the module). Its errors
    are httpx's, so the client's retry policy and the batch treat them as a local run's: a request
    that certainly never left is a ConnectError (safe to send again), one that may have run a ReadError
    (a create is then settled by the probe, a read is retried)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        outgoing = Outgoing.of(request, await request.aread())
        timeout = request.extensions.get("timeout") or {}
        wait = max((float(value) for value in timeout.values() if value is not None), default=60.0) + GRACE
        try:
            incoming = await self.engine.send(outgoing, request.method != "GET", wait)
        except EngineLost as lost:
            kind = httpx.ReadError if lost.sent else httpx.ConnectError
            raise kind(f"{self.engine.name}: {lost}", request=request) from None
        return incoming.response(request)
