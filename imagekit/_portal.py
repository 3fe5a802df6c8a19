"""An event loop in a thread of its own, driven from blocking code (``Batch.run``), that a Ctrl+C
cannot leave running with nobody to stop it.

anyio's ``start_blocking_portal`` waits for its loop to start, and asks it to stop, with plain
waits: a KeyboardInterrupt landing in either (a Ctrl+C while a run starts, or while it is being
stopped) skips the request to stop, and the process then waits for that loop at its end, for ever
(found by the interrupted-ledger test, under load). Here SIGINT is held back across both, and
delivered to the caller's handler once they are done.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager

import anyio
from anyio.from_thread import BlockingPortal

from ._error_base import working_for_caller

__all__ = ["blocking_portal", "sigint_held"]


@contextmanager
def blocking_portal() -> Iterator[BlockingPortal]:
    """A portal to an event loop in a new thread, stopped on the way out (its tasks cancelled when
    the block raised), however often Ctrl+C is pressed meanwhile."""
    ready: Future[BlockingPortal] = Future()

    async def serve() -> None:
        async with BlockingPortal() as portal:
            ready.set_result(portal)
            await portal.sleep_until_stopped()

    def loop() -> None:
        try:
            anyio.run(serve)
        except BaseException as exc:  # handed to the thread waiting for the portal
            if not ready.done():
                ready.set_exception(exc)

    thread = threading.Thread(target=loop, daemon=True, name="imagekit-portal")
    portal: BlockingPortal | None = None
    failed = False
    try:
        with sigint_held():  # a Ctrl+C meanwhile is raised once the portal is known, so it is stopped
            thread.start()
            portal = ready.result()
        with working_for_caller():  # a warning on the loop points at the line that called
            yield portal
    except BaseException:
        failed = True
        raise
    finally:
        if portal is not None:
            with sigint_held():  # the request to stop reaches the loop, whatever else is cut short
                stopped = portal.start_task_soon(portal.stop, failed)
            stopped.result()
            thread.join()


@contextmanager
def sigint_held() -> Iterator[None]:
    """SIGINT held back inside the block and delivered, to whatever handler was there, once out
    (only the main thread receives it; elsewhere, and under a handler Python did not set, nothing
    changes)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    came: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if came:
            signal.raise_signal(signal.SIGINT)
