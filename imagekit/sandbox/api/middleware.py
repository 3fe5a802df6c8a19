"""The Host header check: a request naming a host the sandbox does not serve is refused.

DNS rebinding points a name the attacker controls at this machine, so a browser page of that name
can talk to the sandbox as if it were its own site; its requests carry that name in Host. IP
literals and ``localhost`` cannot be re-bound, so they always pass; other names only when listed
(``SandboxSettings.allowed_hosts``, ``serve --allowed-host``).
"""


from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..domain.faults import DroppedConnection, Faults
from ..interface.errors import SandboxError, send_error
from ..store.outage import refusal, unreachable
from .callers import KEY_READ, Callers

log = logging.getLogger(__name__)

_NOTE_EVERY = 10.0
"""Seconds between two log lines about one outage of the database."""


def host_name(header: str) -> str:
    """The name in a Host header, without port, brackets or trailing dot, lower-cased."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    name = header.rsplit(":", 1)[0] if header.count(":") == 1 else header
    return name.rstrip(".")


def host_allowed(header: str, allowed: frozenset[str]) -> bool:
    name = host_name(header)
    if name == "localhost" or name in allowed:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _loopback(name: str) -> bool:
    try:
        return name == "localhost" or ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def asked_directly(client: str | None, headers: dict[str, str]) -> bool:
    """Whether a request comes from this machine itself: from a loopback address, naming a loopback
    Host, and carrying no forwarding header (``X-Forwarded-*``, ``Forwarded``, ``X-Real-IP``). A proxy
    on this machine connects from loopback too, for anyone who can reach it: its requests name the
    proxy's host or carry what it forwards."""
    forwarded = any(name.startswith("x-forwarded-") or name in ("forwarded", "x-real-ip") for name in headers)
    return (client is not None and _loopback(client) and _loopback(host_name(headers.get("host", "")))
            and not forwarded)


class HostCheckMiddleware:
    """Refuse (400 ``invalid_host``) any HTTP request whose Host names a host not served here."""

    def __init__(self, app, allowed: tuple[str, ...]):
        self.app = app
        self.allowed = frozenset(host_name(name) for name in allowed)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"host")
            if header is not None and not host_allowed(header.decode("latin-1"), self.allowed):
                await send_error(send, SandboxError("invalid_host", "The Host header names a host this "
                                                    "sandbox does not serve (see serve --allowed-host)."))
                return
        await self.app(scope, receive, send)


class OutageMiddleware:
    """Answers 503 ``service_unavailable`` (with Retry-After) for a request that failed because the
    database was unreachable, wherever that happened (reading the caller, in a handler), and notes
    the outage in the log once every few seconds instead of a traceback per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._noted = 0.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if started or not unreachable(exc):
                raise
            if time.monotonic() - self._noted > _NOTE_EVERY:
                self._noted = time.monotonic()
                log.warning("the database is unreachable (%s); answering 503 until it is back",
                            str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            await send_error(send, refusal())


class RefreshShared:
    """On a database several workers share: read what another worker may have changed (clock,
    faults) before each request, so a request that follows a change sees it, in any worker; an
    ``/api/`` request's API key is read with it, in one statement (``Callers.refresh_shared``)."""

    def __init__(self, app: ASGIApp, callers: Callers) -> None:
        self.app, self.callers = app, callers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            # The first X-Api-Key, as Starlette's request.headers.get gives it to the dependency.
            key = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"x-api-key"), None)
            read = self.callers.refresh_shared(key if scope["path"].startswith("/api/") else None)
            if read is not None:
                scope[KEY_READ] = read
        await self.app(scope, receive, send)


class FaultMiddleware:
    """ASGI middleware applying the configured faults to ``/api/`` requests."""

    def __init__(self, app, faults: Faults):
        self.app = app
        self.faults = faults

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            await self.app(scope, receive, send)
            return
        config = self.faults.config
        if config.latency > 0:
            await asyncio.sleep(config.latency)
        for rate, name in ((config.rate_503, "service_unavailable"), (config.rate_429, "rate_limited")):
            if self.faults.roll(rate):
                await send_error(send, SandboxError(name, f"Injected fault: {name.replace('_', ' ')}.",
                                                    headers={"Retry-After": f"{config.retry_after:g}"}))
                return
        if not self.faults.roll(config.drop_rate):
            await self.app(scope, receive, send)
            return
        if config.drop_phase == "after":
            async def swallow(message) -> None:
                pass
            await self.app(scope, receive, swallow)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"65536")]})
        await send({"type": "http.response.body", "body": b"{", "more_body": True})
        raise DroppedConnection(scope["path"])


_SLACK = 64 * 1024
"""Room for multipart framing and form fields around the largest accepted file."""


class BodyLimitMiddleware:
    """Refuse bodies over ``max_bytes`` (+ slack), by Content-Length or while streaming."""

    def __init__(self, app, max_bytes: int):
        self.app = app
        self.limit = max_bytes + _SLACK

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        seen = 0
        started = False

        async def counting_receive():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        async def tracking_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _too_large(send, self.limit)


class _TooLarge(BaseException):  # not Exception: body parsers must not swallow it
    pass


async def _too_large(send, limit: int) -> None:
    await send_error(send, SandboxError("payload_too_large", f"The request body is over {limit} bytes."))


class StampArrival:
    """Note when each request reached the app (``scope["arrived"]``, monotonic seconds): a simulated
    generation's time counts from there, as a real service's latency includes its request handling."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        scope["arrived"] = time.monotonic()
        await self.app(scope, receive, send)


class WorkerHeader:
    """Adds ``X-Sandbox-Worker: <pid>`` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.header = (b"x-sandbox-worker", str(os.getpid()).encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), self.header]
            await send(message)

        await self.app(scope, receive, named if scope["type"] == "http" else send)
