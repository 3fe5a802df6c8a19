"""Request size limit as ASGI middleware: an oversized body is a 413 before it is read whole."""

from __future__ import annotations

from .errors import SandboxError, send_error

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
