"""Requests made by Ray tasks (``ray``, the ``ray`` extra).

Ray runs a task again only when asked (``max_retries``): these tasks are never run again. A create's
ticket is kept by a small actor of the run (``Tickets``, one call at a time): a task takes its ticket
before sending, and the caller, giving a task up (its worker killed or paused past the request's
time: the task is then cancelled, its worker process killed), takes the ticket back if it is still
there.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

import anyio

from ..errors import ConfigError
from ..extras import require
from . import EngineLost, new_ticket
from .task import CLAIM_PATIENCE, Incoming, Outgoing, send

__all__ = ["RayEngine", "on_a_lasting_thread"]

T = TypeVar("T")

CONNECT_TIMEOUT = 10
"""Seconds an address is given to accept a connection before it is refused (Ray's own wait is minutes)."""
TASK_CPUS = 0.25
"""A task's share of a CPU: a request mostly waits on the service, so four run on each CPU Ray counts."""


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


def _imports(module: str) -> None:
    """On a node: import ``module`` (what the tasks run), or raise as the node's Python does."""
    __import__(module)


class RayEngine:
    """Requests sent as Ray tasks."""

    name = "ray"

    def __init__(self, owned: bool) -> None:
        import ray

        self.owned = owned
        self.tickets: Any = ray.remote(num_cpus=0)(Tickets).remote()
        self.task: Any = ray.remote(max_retries=0, num_cpus=TASK_CPUS)(send)
        self.calls: dict[Callable[..., Any], Any] = {}
        """``call``'s functions, each made a Ray remote function once."""

    @classmethod
    def connect(cls, address: str | None) -> RayEngine:
        """Ray as this process already joined it; else ``ray.init(address)`` (a local Ray when none);
        its nodes checked (``check_nodes``)."""
        ray = require("ray", "ray")
        if ray.is_initialized():
            if address is not None:
                raise ConfigError("this process has joined Ray already: leave the address out, or ray.shutdown() first")
            return cls(owned=False).check_nodes()
        if address is not None:
            _answers(address)
        try:
            on_a_lasting_thread(lambda: _quietly_init(ray, address))
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ConfigError(f"no Ray cluster answers at {address!r}: check the address (host:6379, or "
                              f"ray://host:10001) and that the cluster runs ({str(exc).splitlines()[0]})") from None
        engine = cls(owned=True)
        try:
            return engine.check_nodes()
        except ConfigError:
            engine.close()
            raise

    def check_nodes(self) -> RayEngine:
        """Every live node imports what the tasks run, now: a node without imagekit is refused in one
        line before anything is sent (its tasks would fail, row after row)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from .task import __name__ as task_module

        nodes = [node for node in ray.nodes() if node.get("Alive")]
        check = ray.remote(num_cpus=0, max_retries=0)(_imports)
        failed = []
        for node in nodes:
            try:
                ray.get(check.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
                        .remote(task_module))
            except Exception as exc:  # noqa: BLE001 - a node that cannot run the tasks, whatever it says
                failed.append((node.get("NodeManagerAddress", node["NodeID"]), exc))
        if failed:
            where, error = failed[0]
            cause = str(error).strip().splitlines()[-1][:200]
            raise ConfigError(f"{len(failed)} of the {len(nodes)} Ray nodes cannot import {task_module} ({where}: "
                              f"{cause}): install imagekit where each node runs (pip install imagekit)")
        return self

    async def send(self, outgoing: Outgoing, once: bool, wait: float) -> Incoming:

        ticket = new_ticket() if once else None
        if ticket is not None:
            try:
                await self.tickets.offer.remote(ticket)
            except Exception as exc:  # the actor out of reach: no task was given the request
                raise EngineLost(f"the ticket was not kept ({type(exc).__name__})", sent=False) from None
        ref = self.task.remote(outgoing, RayClaim(self.tickets, ticket) if ticket is not None else None)
        try:
            result: Incoming = await _answer(ref, wait)
            return result
        except EngineLost as lost:
            raise EngineLost(str(lost), sent=not await self._took_back(ticket)) from None

    async def call(self, function: Callable[..., T], *args: Any, wait: float) -> T:
        import ray

        remote = self.calls.get(function)
        if remote is None:
            remote = self.calls[function] = ray.remote(max_retries=0, num_cpus=TASK_CPUS)(function)
        result: T = await _answer(remote.remote(*args), wait)
        return result

    async def _took_back(self, ticket: str | None) -> bool:
        """Whether the caller took the ticket back (no task had it: the request never left). When a
        task had it, this returns ``CLAIM_PATIENCE`` later: a task still taking it then sends nothing."""
        if ticket is None:
            return False
        with suppress(Exception):  # the actor out of reach: whether a task had it cannot be known
            if await self.tickets.take.remote(ticket):
                return True
        await anyio.sleep(CLAIM_PATIENCE)
        return False

    def close(self) -> None:
        import ray

        with suppress(Exception):
            ray.kill(self.tickets)
        if self.owned:
            ray.shutdown()


async def _answer(ref: Any, wait: float) -> Any:
    """The task's result within ``wait`` seconds; else the task cancelled (its worker killed) and
    EngineLost (it may have run)."""
    import ray

    try:
        with anyio.fail_after(wait):
            return await ref
    except Exception as exc:
        with suppress(Exception):
            ray.cancel(ref, force=True)
        raise EngineLost(f"task lost ({type(exc).__name__})", sent=True) from None


def on_a_lasting_thread(call: Callable[[], T]) -> T:
    """``call()``, run on a thread of its own that lasts as long as the process. A local Ray's processes
    (its GCS, its raylet) are started with Linux's parent-death signal, which the kernel sends when the
    *thread* that started them ends: started on a batch's worker thread (idle ones end after 10 s, and
    all of them when Ctrl+C stops the run), Ray was killed under the run, which then waited a minute
    for it and died without a word."""
    answer: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

    def keep() -> None:
        try:
            answer.put((True, call()))
        except BaseException as exc:  # noqa: BLE001 - given to the caller, whatever it is
            answer.put((False, exc))
            return
        threading.Event().wait()  # never set: what the call started lives as long as the process

    threading.Thread(target=keep, name="imagekit-ray", daemon=True).start()
    ok, value = answer.get()
    if not ok:
        raise value
    return value


class _NotMainThread(logging.Filter):
    """Drops Ray's warning that it set no SIGTERM handler (it does only on the main thread): the
    caller's own handling of SIGTERM stays, as it should (the command line's stops a run as Ctrl+C does)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("SIGTERM handler is not set")


def _quietly_init(ray: Any, address: str | None) -> None:
    said = logging.getLogger("ray._private.worker")
    quiet = _NotMainThread()
    said.addFilter(quiet)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    finally:
        said.removeFilter(quiet)


def _answers(address: str) -> None:
    """Refuse, in one line and within ``CONNECT_TIMEOUT``, an address nothing listens at."""
    host_port = address.split("://", 1)[-1].rsplit("/", 1)[0]
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"address={address!r}: a Ray cluster's address looks like host:6379 (or ray://host:10001)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError:
        raise ConfigError(f"no Ray cluster answers at {address!r} within {CONNECT_TIMEOUT} s: check the address "
                          "(host:6379, or ray://host:10001) and that the cluster runs") from None
