"""What runs on a worker: one HTTP request, made once, its answer sent back whole.

The request and its answer travel as plain values (``Outgoing``, ``Incoming``), so a worker needs
only imagekit and httpx; nothing of the caller's client, journal or ledger goes with them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

__all__ = ["Outgoing", "Incoming", "send", "CLAIM_PATIENCE"]

CLAIM_PATIENCE = 2.0
"""Seconds, by the worker's own clock, a task's take of its ticket may last for the task still to
send: the caller waits this long after giving up a task whose ticket was taken before it looks
for the request's images, so a worker paused while taking it (its answer read 10 s later) cannot
send after the caller has looked and sent the request again. A slower take sends nothing and says
so as a refused connection (the request is sent again, once, by the caller)."""

_CHANGED_IN_READING = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that describe the body as it came over the wire, not as it is sent back (decoded, whole)."""
_local = threading.local()


@dataclass(frozen=True)
class Outgoing:
    """One request, as values."""

    method: str
    url: str
    headers: list[tuple[str, str]]
    content: bytes
    timeout: dict[str, float | None]

    @classmethod
    def of(cls, request: httpx.Request, content: bytes) -> Outgoing:
        return cls(request.method, str(request.url), list(request.headers.multi_items()), content,
                   dict(request.extensions.get("timeout") or {}))

    def request(self) -> httpx.Request:
        return httpx.Request(self.method, self.url, headers=self.headers, content=self.content,
                             extensions={"timeout": self.timeout})


@dataclass(frozen=True)
class Incoming:
    """What a task got: an answer (``status``, ``headers``, ``content``), or ``error`` (an httpx
    transport error's class name and message), or ``taken`` (another run of the task had the
    request's ticket: this one sent nothing)."""

    status: int = 0
    headers: tuple[tuple[str, str], ...] = ()
    content: bytes = b""
    error: tuple[str, str] | None = None
    taken: bool = False

    def response(self, request: httpx.Request) -> httpx.Response:
        """The answer as the caller's httpx would have read it, or the error it would have raised."""
        if self.taken:
            raise httpx.ReadError("another run of this task had the request's ticket: it may have run",
                                  request=request)
        if self.error is not None:
            kind = getattr(httpx, self.error[0], None)
            if not (isinstance(kind, type) and issubclass(kind, httpx.TransportError)):
                kind = httpx.ReadError
            raise kind(self.error[1], request=request)
        return httpx.Response(self.status, headers=list(self.headers), content=self.content, request=request)


def send(outgoing: Outgoing, claim: Callable[[], bool] | None = None, patience: float = CLAIM_PATIENCE) -> Incoming:
    """Make ``outgoing``'s request (the task an engine runs): after taking its ticket (``claim``),
    when it has one; a task that cannot take it, or took more than ``patience`` seconds to, sends
    nothing."""
    if claim is not None:
        asked = time.monotonic()
        if not claim():
            return Incoming(taken=True)
        if (took := time.monotonic() - asked) > patience:  # the caller may have given the task up and looked
            return Incoming(error=("ConnectError", f"its ticket came {took:.1f} s after it was asked for (more "
                                   f"than {patience:g} s): the task sent nothing"))
    try:
        response = _client().send(outgoing.request())
        response.read()
    except httpx.TransportError as exc:
        return Incoming(error=(type(exc).__name__, str(exc) or type(exc).__name__))
    headers = tuple((name, value) for name, value in response.headers.multi_items()
                    if name.lower() not in _CHANGED_IN_READING)
    return Incoming(response.status_code, headers, response.content)


def _client() -> httpx.Client:
    """The worker thread's connection pool (a worker runs many tasks: each need not connect anew)."""
    client = getattr(_local, "client", None)
    if client is None:
        client = _local.client = httpx.Client()
    return client
