"""The sandbox's database going away (a restart, dropped connections, a full pool): how it is
recognised, how a request is answered meanwhile, and how work already paid for waits it out.

- Any request that meets the outage before its work was charged is answered 503
  ``service_unavailable`` with ``Retry-After``: nothing was charged, the client may send it again.
- Work already charged waits for the database to record its outcome (``patiently``, up to the
  settings' ``outage_patience``, 30 s by default); past that its concurrency slot is abandoned,
  and the work is refunded as soon as the database answers again (``ConcurrencyGate.abandon``).
- Connections are not kept across the outage: the pool checks each one before use
  (``pool_pre_ping``), so the workers reconnect by themselves when the database is back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError, TimeoutError as PoolTimeout

from ..interface.errors import SandboxError

RETRY_AFTER = 2
"""Seconds a client is asked to wait (``Retry-After``): a restart usually takes about that long."""
OUTAGE_REFUND = "The sandbox's database was unreachable; this image was refunded."
"""Why an image given up in an outage failed."""
_BACKOFF = (0.05, 1.0)
T = TypeVar("T")
log = logging.getLogger(__name__)


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database could not do this now (it is restarting or down, the
    connection dropped, the pool ran out, a lock or serialization conflict): the same statement
    may succeed shortly, and nothing of the failed transaction was kept."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, OperationalError | DisconnectionError | PoolTimeout)


def refusal() -> SandboxError:
    """The answer while the database is unreachable: 503, come back shortly, nothing charged."""
    return SandboxError("service_unavailable", "The sandbox's database is unreachable for now; nothing was "
                        "charged. Send the request again shortly.", headers={"Retry-After": str(RETRY_AFTER)})


def patiently(step: Callable[[], T], patience: float) -> T:
    """``step()`` (a transaction of its own), tried again while the database is unreachable, for up
    to ``patience`` seconds; the last failure is raised. ``step`` must be safe to repeat: a commit
    whose answer was lost may have happened."""
    deadline = time.monotonic() + patience
    delay = _BACKOFF[0]
    while True:
        try:
            return step()
        except Exception as exc:
            if not unreachable(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)  # the database gives no sign when it is back: try again after a while
        delay = min(delay * 2, _BACKOFF[1])
