"""Domain errors of the sandbox: each carries its HTTP status and the spec's error name.

One exception handler (see ``app.py``) renders every one of them as the spec's error body
``{"success": false, "code": <status>, "data": "<name>", "message": "..."}``. Code anywhere in the
sandbox (routes, credits, engines) raises these; nothing builds an error response by hand.
"""

from __future__ import annotations

import json


class SandboxError(Exception):
    """A refusal with an HTTP status, a stable error name and a human message."""

    def __init__(self, status: int, name: str, message: str = "", *, headers: dict[str, str] | None = None):
        super().__init__(message or name)
        self.status = status
        self.name = name
        self.message = message or name.replace("_", " ")
        self.headers = headers or {}

    def body(self) -> dict:
        return {"success": False, "code": self.status, "data": self.name, "message": self.message}


async def send_error(send, error: SandboxError) -> None:
    """Answer an ASGI request with ``error`` from a middleware (outside FastAPI's handlers)."""
    body = json.dumps(error.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": error.status,
                "headers": headers + [(k.lower().encode(), v.encode()) for k, v in error.headers.items()]})
    await send({"type": "http.response.body", "body": body})


def invalid(message: str, name: str = "invalid_request") -> SandboxError:
    """A 400 for input that breaks the interface's rules."""
    return SandboxError(400, name, message)


def not_found(name: str, message: str) -> SandboxError:
    """A 404; another user's resource answers exactly like an unknown one."""
    return SandboxError(404, name, message)


class Cancelled(Exception):
    """Raised inside a job when its edit was cancelled; never reaches a client as an error body."""
