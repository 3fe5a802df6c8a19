"""A transport lent by one client to another (a copy, an async twin): one pool, one owner.

A client derived with ``with_options()`` or ``to_async()`` sends through its origin's transport, so
proxies, TLS settings and test transports carry over; only the owner closes it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from ._http import Transport

__all__ = ["LentTransport"]


class LentTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Another client's transport, lent to a copy or an async twin: requests go through the same
    pool, proxies and TLS settings, and closing stays with its owner. An async request on a
    blocking-only transport is sent from a worker thread."""

    def __init__(self, transport: Transport) -> None:
        self.owned: Transport = transport.owned if isinstance(transport, LentTransport) else transport
        """The transport requests really go through."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(self.owned, httpx.BaseTransport):
            raise TypeError(f"{type(self.owned).__name__} serves async clients only")
        return self.owned.handle_request(request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if isinstance(self.owned, httpx.AsyncBaseTransport):
            return await self.owned.handle_async_request(request)
        from anyio.to_thread import run_sync

        await request.aread()  # the body as bytes, which a blocking transport can send
        response = await run_sync(self.owned.handle_request, request)
        return httpx.Response(response.status_code, headers=response.headers, extensions=response.extensions,
                              stream=_ThreadedStream(response.stream))

    def close(self) -> None:
        """Nothing: the owner closes it."""

    async def aclose(self) -> None:
        """Nothing: the owner closes it."""


class _ThreadedStream(httpx.AsyncByteStream):
    """A blocking response body read chunk by chunk from a worker thread."""

    def __init__(self, stream: httpx.SyncByteStream | httpx.AsyncByteStream) -> None:
        assert isinstance(stream, httpx.SyncByteStream)
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        from anyio.to_thread import run_sync

        chunks = iter(self._stream)
        while (chunk := await run_sync(next, chunks, None)) is not None:
            yield chunk

    async def aclose(self) -> None:
        from anyio.to_thread import run_sync

        await run_sync(self._stream.close)
