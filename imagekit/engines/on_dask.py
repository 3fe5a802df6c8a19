"""Requests made by the tasks of a Dask cluster (``distributed``, the ``dask`` extra).

A create's ticket is an item of a Dask ``Queue`` named after it, kept by the scheduler: the task
takes it before sending, and a run of the task again (the scheduler reschedules the tasks of a
worker that died) finds the queue empty and sends nothing. The caller, giving a task up, takes the
ticket back if it is still there.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

import anyio

from ..errors import ConfigError
from ..extras import require
from . import EngineLost, new_ticket
from .task import CLAIM_PATIENCE, Incoming, Outgoing, send

__all__ = ["DaskEngine"]

T = TypeVar("T")

CONNECT_TIMEOUT = 10
"""Seconds a scheduler is given to answer before its address is refused."""
TASK_MODULE = "imagekit.engines.task"
"""What a worker imports to run the tasks (``task.send``)."""


class DaskClaim:
    """A task's take of its ticket (picklable: it goes with the task)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self) -> bool:
        from distributed import Queue

        queue = Queue(self.name)
        try:
            return bool(queue.get(batch=True))
        finally:
            queue.close()


class DaskEngine:
    """Requests sent as tasks of a ``distributed.Client``'s cluster."""

    name = "dask"

    def __init__(self, client: Any, owned: bool) -> None:
        self.client, self.owned = client, owned

    @classmethod
    def connect(cls, client: Any, address: str | None) -> DaskEngine:
        """The given client; else one of ``address``; else the client this process already made; its
        workers checked (``check_workers``)."""
        distributed = require("distributed", "dask")
        if client is not None:
            if address is not None:
                raise ConfigError("give a distributed.Client or an address, not both")
            return cls(client, owned=False).check_workers()
        if address is None:
            try:
                return cls(distributed.get_client(), owned=False).check_workers()
            except ValueError:
                raise ConfigError("engine='dask' needs a cluster: give address='tcp://host:8786' (the "
                                  "scheduler's), or make a distributed.Client first") from None
        from distributed.comm.registry import backends

        scheme = address.split("://", 1)[0] if "://" in address else "tcp"
        if scheme not in backends:  # refused before a Client is made: a half-made one complains as it goes
            raise ConfigError(f"address={address!r}: a Dask scheduler's address looks like tcp://host:8786 "
                              f"(schemes: {', '.join(sorted(backends))})")
        try:
            engine = cls(distributed.Client(address, timeout=f"{CONNECT_TIMEOUT}s", set_as_default=False), owned=True)
        except OSError:  # refused, or no answer in time (TimeoutError)
            raise ConfigError(f"no Dask scheduler answered at {address!r} within {CONNECT_TIMEOUT} s: check the "
                              "address (tcp://host:8786) and that the scheduler runs") from None
        try:
            return engine.check_workers()
        except ConfigError:
            engine.close()
            raise

    def check_workers(self) -> DaskEngine:
        """Every worker imports what the tasks run, now, all at once: a cluster with no workers, or a
        worker without imagekit, is refused in one line before anything is sent (its tasks would
        fail, row after row), and the first requests do not wait on the workers' imports."""
        where = self.client.scheduler.address
        try:  # (a worker being started again, after its process died, is waited for)
            self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except TimeoutError:
            raise ConfigError(f"the Dask cluster at {where} has no workers: start some (dask worker {where})") from None
        imported = self.client.run(exec, f"import {TASK_MODULE}", on_error="return")
        # only an import that failed says the worker lacks imagekit (a worker going away meanwhile does not)
        failed = sorted(worker for worker, outcome in imported.items() if isinstance(outcome, ImportError))
        if failed:
            error = imported[failed[0]]
            raise ConfigError(f"{len(failed)} of the {len(imported)} Dask workers at {where} cannot import "
                              f"{TASK_MODULE} ({failed[0]}: {type(error).__name__}: {error}): install imagekit "
                              "where each worker runs (pip install imagekit)")
        return self

    async def send(self, outgoing: Outgoing, once: bool, wait: float) -> Incoming:
        from distributed import Queue

        queue = None
        try:
            if once:
                try:
                    queue = await anyio.to_thread.run_sync(lambda: Queue(new_ticket(), client=self.client))
                    await anyio.to_thread.run_sync(queue.put, 1)
                except Exception as exc:  # the scheduler out of reach: no task was given the request
                    raise EngineLost(f"the scheduler did not take the task ({type(exc).__name__}: {exc})",
                                     sent=False) from None
            future = self.client.submit(send, outgoing, DaskClaim(queue.name) if queue is not None else None,
                                        pure=False, retries=0)
            try:
                return await self._answer(future, wait)
            except EngineLost as lost:
                raise EngineLost(str(lost), sent=not await self._took_back(queue)) from None
        finally:
            if queue is not None:
                with suppress(Exception):
                    queue.close()

    async def call(self, function: Callable[..., T], *args: Any, wait: float) -> T:
        result: T = await self._answer(self.client.submit(function, *args, pure=False, retries=0), wait)
        return result

    @staticmethod
    async def _answer(future: Any, wait: float) -> Any:
        """The task's result within ``wait`` seconds; else the task cancelled and EngineLost (it may have run)."""
        try:
            return await anyio.to_thread.run_sync(future.result, wait, abandon_on_cancel=True)
        except Exception as exc:
            with suppress(Exception):
                future.cancel()
            raise EngineLost(f"task lost ({type(exc).__name__}: {exc})".replace("()", ""), sent=True) from None

    @staticmethod
    async def _took_back(queue: Any) -> bool:
        """Whether the caller took the ticket back (no task had it: the request never left). When a
        task had it, this returns ``CLAIM_PATIENCE`` later: a task still taking it then sends nothing."""
        if queue is None:
            return False
        try:
            if await anyio.to_thread.run_sync(lambda: queue.get(batch=True)):
                return True
        except Exception:  # the scheduler out of reach: whether a task had it cannot be known
            pass
        await anyio.sleep(CLAIM_PATIENCE)
        return False

    def close(self) -> None:
        if self.owned:
            self.client.close()
