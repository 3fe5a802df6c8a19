"""The only module that talks to httpx: auth header, timeouts, safe retries, error mapping.

Resources describe a request as a ``Call`` and get back a 2xx ``Response``; anything else becomes an
exception from ``imagekit.errors`` here and nowhere else. The retry loop exists twice (sync and
async) but every decision in it is made by the pure functions of ``_retry``.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import cache
from typing import IO, TYPE_CHECKING, Any

import httpx

from . import errors
from ._retry import Failure, RetryPolicy, parse_retry_after
from ._urls import guard_logs, shown_url, without_secrets
from .config import VERSION, Config

if TYPE_CHECKING:
    import asyncio
    import ssl

# asyncio and anyio load when async code first runs: `import imagekit` stays light for blocking use.

__all__ = ["Call", "ME", "Response", "SyncHTTP", "AsyncHTTP", "Hook", "Charge", "Transport", "charge_of"]

log = logging.getLogger("imagekit")

Response = httpx.Response
"""A 2xx response handed to resource parsers."""

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_NEVER_RETRY = (httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpx.ProxyError)


@dataclass(frozen=True, slots=True)
class Call:
    """One request as a resource describes it, before httpx sees it."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    files: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    timeout: float | None = None
    operation: str | None = None
    """What the ledger calls this request (create, an edit's name, cancelEdit...); None for a read."""
    read: str | None = None
    """What a read the ledger learns from is (me, usage, styles, image); None for others."""
    source_id: int | None = None
    """The image the call is about: an edit's source, a metadata read's image."""
    request_id: str | None = None
    """The edit request id this call sends, or the one it cancels."""
    retry: RetryPolicy | None = None
    """This call's retry policy, instead of the client's: a caller that loops over a call itself
    (polling, probing) asks for fewer retries rather than multiplying them."""


ME = Call("GET", "/api/users/me", read="me")
"""The read of whose a key is (free): the users resource sends it, and the ledger's recorder asks for
it before a priced call it cannot yet price."""


Hook = Callable[["Call", "Response | None", "BaseException | None", float], None]
"""Called once per ``send`` with its final outcome: (call, 2xx response or None, error or None, seconds).
A hook with a ``before(call)`` method is also asked before the call is sent; what that raises (a
budget's refusal) reaches the caller, and nothing is sent. ``before`` may instead return a read it
needs first (the plan's prices, to hold a budget before the first charge): that read is sent, and
every hook is asked again."""
Transport = httpx.BaseTransport | httpx.AsyncBaseTransport
"""What a client's ``transport`` option takes."""
Charge = tuple[int | float | None, int | float | None]
"""(credits charged, credits remaining) as a charged response's headers report them."""


def charge_of(response: Response, config: Config) -> Charge:
    """(credits charged, credits remaining) from a charged response's headers, None when absent."""
    wire = config.wire
    return (
        _number(response.headers.get(wire.credits_charged_header)),
        _number(response.headers.get(wire.credits_remaining_header)),
    )


def _number(value: str | None) -> int | float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if number.is_integer() else number


class _MaskedHeaders(httpx.Headers):
    """Request headers whose repr hides the API key (httpx hides only Authorization)."""

    def __init__(self, headers: httpx.Headers, secret: str) -> None:
        super().__init__(headers)
        self._secret = secret.lower()

    def __repr__(self) -> str:
        shown = [(name, "[secure]" if name.lower() == self._secret else value) for name, value in self.multi_items()]
        return f"Headers({shown!r})"


def _timeout(seconds: float) -> httpx.Timeout:
    return httpx.Timeout(seconds, connect=min(seconds, 10.0))


@cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS settings (honouring SSL_CERT_FILE and SSL_CERT_DIR), made once per process:
    each context loads the whole CA bundle (tens of ms), which every client, copy of a client and
    async pool on a new event loop would otherwise pay again."""
    return httpx.create_ssl_context()


class _Base:
    """State and decisions shared by the sync and async loops."""

    def __init__(self, config: Config) -> None:
        self.config = config
        guard_logs(config.base_url)  # a user, password or token in it stays out of httpx's request lines
        self._headers = {
            "User-Agent": f"imagekit-python/{VERSION}",
            "Accept": "application/json",
            config.wire.api_key_header: config.api_key,
        }
        self.hooks: list[Hook] = []
        """Observers of every request's outcome (the credit ledger is one)."""

    def _before(self, call: Call) -> Call | None:
        """Ask the hooks about ``call`` before it is sent: a read one needs first (then ask again), or None."""
        for hook in self.hooks:
            before = getattr(hook, "before", None)
            if before is not None and (needed := before(call)) is not None:
                return needed  # type: ignore[no-any-return]
        return None

    def _observe(self, call: Call, response: Response | None, error: BaseException | None,
                 started: float) -> None:
        seconds = time.monotonic() - started
        for hook in self.hooks:
            try:
                hook(call, response, error, seconds)
            except Exception:  # an observer must never break the request it watches
                log.exception("request hook %r failed", hook)

    def _options(self) -> dict[str, Any]:
        return {
            "base_url": self.config.base_url,
            "headers": self._headers,
            "timeout": _timeout(self.config.timeout),
            "follow_redirects": False,
            "verify": _tls(),
        }

    def _build(self, client: httpx.Client | httpx.AsyncClient, call: Call) -> httpx.Request:
        request = client.build_request(
            call.method,
            call.path,
            params=call.params,
            json=call.json,
            data=call.data,
            files=call.files,
            headers=call.headers,
            timeout=_timeout(call.timeout) if call.timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )
        # Errors carry this request; whoever prints its headers must not see the key.
        request.headers = _MaskedHeaders(request.headers, self.config.wire.api_key_header)
        return request

    def request(self, call: Call) -> httpx.Request:
        """``call`` as this client would send it (its base URL, key and timeouts), for another process
        to send: an engine's worker storing an image. Nothing is sent, observed or retried here."""
        with httpx.Client(**self._options()) as client:  # builds only: no connection is opened
            return self._build(client, call)

    def _policy(self, call: Call) -> RetryPolicy:
        return call.retry or self.config.retry

    def _after_error(self, call: Call, exc: httpx.TransportError, attempt: int) -> float:
        """Seconds to wait before retrying, or raise the mapped error."""
        if isinstance(exc, _NEVER_RETRY):
            raise errors.APIConnectionError(
                f"Cannot send {call.method} {call.path} to {shown_url(self.config.base_url)} ({exc}): check "
                f"{errors.ENV_BASE_URL} (or base_url=), which needs http:// or https://.", may_have_executed=False,
                request=exc.request if _has_request(exc) else None,
            ) from exc
        failure = Failure.NOT_SENT if isinstance(exc, _NOT_SENT) else Failure.MAYBE_SENT
        delay = self._policy(call).decide(call.method, failure, attempt)
        if delay is None:
            raise _transport_error(call, exc, failure, self.config.base_url) from exc
        self._log_retry(call, type(exc).__name__, delay, attempt)
        return delay

    def _after_response(self, call: Call, response: Response, attempt: int) -> float:
        """Seconds to wait before retrying a non-2xx response (its body read), or raise the mapped error."""
        retry_after = parse_retry_after(response.headers.get("Retry-After"), time.time())
        delay = self._policy(call).decide(call.method, response.status_code, attempt, retry_after=retry_after)
        if delay is None:
            raise errors.from_response(response)
        self._log_retry(call, str(response.status_code), delay, attempt)
        return delay

    def _log_retry(self, call: Call, why: str, delay: float, attempt: int) -> None:
        log.info(
            "retrying %s %s in %.2fs after %s (retry %d of %d)",
            call.method, call.path, delay, why, attempt + 1, self._policy(call).max_retries,
        )


def _transport_error(call: Call, exc: httpx.TransportError, failure: Failure,
                     base_url: str) -> errors.APIConnectionError:
    maybe = failure is Failure.MAYBE_SENT
    kind = errors.APITimeoutError if isinstance(exc, httpx.TimeoutException) else errors.APIConnectionError
    why = without_secrets(str(exc), base_url) or type(exc).__name__
    base_url = shown_url(base_url)
    if maybe:
        note = "; it may have run on the server, so it was not sent again" if call.method == "POST" else ""
        message = f"{call.method} {call.path}: no response from {base_url} ({why}){note}"
    else:
        message = (f"Could not reach {base_url} ({why}): check {errors.ENV_BASE_URL} (or base_url=) "
                   "and that the service is running.")
    hint = errors.api_suffix_hint(base_url)
    return kind(message + (f"\n{hint}" if hint else ""), may_have_executed=maybe,
                request=exc.request if _has_request(exc) else None)


def _has_request(exc: httpx.TransportError) -> bool:
    try:
        _ = exc.request
    except RuntimeError:  # httpx raises when the exception was created without a request
        return False
    return True


class SyncHTTP(_Base):
    """Blocking HTTP with retries, over one pooled ``httpx.Client``."""

    def __init__(self, config: Config, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(config)
        self._client = httpx.Client(transport=transport, **self._options())

    def send(self, call: Call, *, stream: bool = False) -> Response:
        """Send ``call``, retrying what is safe; return a 2xx response or raise."""
        self._ready(call)
        return self._observed(call, lambda: self._send(call, stream)[0])

    def _ready(self, call: Call) -> None:
        """Ask the hooks before ``call`` goes, first sending the reads they need (once each)."""
        while (needed := self._before(call)) is not None:
            self.send(needed)

    def _observed(self, call: Call, send: Callable[[], Response]) -> Response:
        started = time.monotonic()
        try:
            response = send()
        except BaseException as exc:
            self._observe(call, None, exc, started)
            raise
        self._observe(call, response, None, started)
        return response

    def _send(self, call: Call, stream: bool, attempt: int = 0) -> tuple[Response, int]:
        """A 2xx response and the attempts made before it (counting from ``attempt``), or raise."""
        while True:
            try:
                response = self._client.send(self._build(self._client, call), stream=stream)
            except httpx.TransportError as exc:
                delay = self._after_error(call, exc, attempt)
            else:
                if response.is_success:
                    return response, attempt
                try:
                    delay = self._after_response(call, _read(response), attempt)
                finally:
                    response.close()
            time.sleep(delay)
            attempt += 1

    def download(self, call: Call, sink: IO[bytes]) -> Response:
        """Stream a binary response into ``sink`` (seekable: a stream cut short is sent again, under
        the same retry policy as the request, and written over); return the (closed) response."""
        self._ready(call)
        return self._observed(call, lambda: self._download(call, sink))

    def _download(self, call: Call, sink: IO[bytes]) -> Response:
        attempt = 0
        while True:
            response, attempt = self._send(call, True, attempt)
            try:
                for chunk in response.iter_bytes():
                    sink.write(chunk)
                return response
            except httpx.TransportError as exc:
                delay = self._after_error(call, exc, attempt)
            finally:
                response.close()
            _rewind(sink)
            time.sleep(delay)
            attempt += 1

    def close(self) -> None:
        """Close pooled connections."""
        self._client.close()


def _rewind(sink: IO[bytes]) -> None:
    """Empty ``sink`` for a download sent again."""
    sink.seek(0)
    sink.truncate()


def _read(response: Response) -> Response:
    response.read()
    return response


async def _aread(response: Response) -> Response:
    await response.aread()
    return response


class AsyncHTTP(_Base):
    """Awaitable HTTP with retries; rebuilds its pool when it finds itself on a new event loop."""

    def __init__(self, config: Config, transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(config)
        self._transport = transport
        self._client_: httpx.AsyncClient | None = None
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._blocking: SyncHTTP | None = None

    @property
    def _client(self) -> httpx.AsyncClient:
        # A pool's connections belong to the loop that opened them: after asyncio.run() returns, or
        # in a fresh notebook loop, they are dead, so start a new pool (the old one holds no task).
        loop = _running_loop()
        if self._client_ is None or (self._loop() if self._loop else None) is not loop:
            self._client_ = httpx.AsyncClient(transport=self._transport, **self._options())
            self._loop = weakref.ref(loop) if loop is not None else None
        return self._client_

    async def send(self, call: Call, *, stream: bool = False) -> Response:
        """Send ``call``, retrying what is safe; return a 2xx response or raise."""
        await self._ready(call)
        return await self._observed(call, self._response(call, stream))

    async def _ready(self, call: Call) -> None:
        """Ask the hooks before ``call`` goes, first sending the reads they need (once each)."""
        while (needed := self._before(call)) is not None:
            await self.send(needed)

    async def _response(self, call: Call, stream: bool) -> Response:
        return (await self._send(call, stream))[0]

    async def _observed(self, call: Call, send: Coroutine[Any, Any, Response]) -> Response:
        started = time.monotonic()
        try:
            response = await send
        except BaseException as exc:
            self._observe(call, None, exc, started)
            raise
        self._observe(call, response, None, started)
        return response

    async def _send(self, call: Call, stream: bool, attempt: int = 0) -> tuple[Response, int]:
        """A 2xx response and the attempts made before it (counting from ``attempt``), or raise."""
        client = self._client
        while True:
            try:
                response = await client.send(self._build(client, call), stream=stream)
            except httpx.TransportError as exc:
                delay = self._after_error(call, exc, attempt)
            else:
                if response.is_success:
                    return response, attempt
                try:
                    delay = self._after_response(call, await _aread(response), attempt)
                finally:
                    await response.aclose()
            import anyio

            await anyio.sleep(delay)
            attempt += 1

    async def download(self, call: Call, sink: IO[bytes]) -> Response:
        """Stream a binary response into ``sink`` (seekable: a stream cut short is sent again, under
        the same retry policy as the request, and written over); return the (closed) response."""
        await self._ready(call)
        return await self._observed(call, self._download(call, sink))

    async def _download(self, call: Call, sink: IO[bytes]) -> Response:
        attempt = 0
        while True:
            response, attempt = await self._send(call, True, attempt)
            try:
                async for chunk in response.aiter_bytes():
                    sink.write(chunk)
                return response
            except httpx.TransportError as exc:
                delay = self._after_error(call, exc, attempt)
            finally:
                await response.aclose()
            _rewind(sink)
            import anyio  # loads with async code, not with `import imagekit`

            await anyio.sleep(delay)
            attempt += 1

    def blocking(self) -> SyncHTTP:
        """A blocking twin with the same settings, for places that cannot await (notebook reprs)."""
        if self._blocking is None:
            transport = self._transport if isinstance(self._transport, httpx.BaseTransport) else None
            self._blocking = SyncHTTP(self.config, transport)
        return self._blocking

    async def aclose(self) -> None:
        """Close pooled connections."""
        if self._client_ is not None and (self._loop() if self._loop else None) is _running_loop():
            await self._client_.aclose()
        self._client_ = None
        if self._blocking is not None:
            self._blocking.close()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio): one pool is fine
        return None
