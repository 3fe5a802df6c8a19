"""Domain errors of the sandbox: every error name it can answer, its status, and the one body.

``ERRORS`` is the single home of the names (docs/reference/errors.md, the error catalogue, and the client's error
classes are checked against it by a test). Code anywhere in the sandbox (routes, credits, engines)
raises ``SandboxError(name, message)``; one exception handler (see ``app.py``), or ``send_error``
in a middleware, renders it as the spec's body
``{"success": false, "code": <status>, "data": "<name>", "message": "..."}``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

ERRORS: dict[str, int] = {
    # The interface's own three (GET /api/users/me).
    "wrong_api_key": 401, "api_key_expired": 401, "not_logged_in": 403,
    # Input that breaks the interface's rules.
    "invalid_request": 400, "malformed_json": 400, "invalid_generation_mode": 400, "invalid_platform": 400,
    "invalid_api_type": 400, "invalid_request_id": 400, "unsupported_image_source": 400, "invalid_image": 400,
    "invalid_mask": 400, "empty_mask": 400, "mask_size_mismatch": 400, "invalid_outpaint": 400,
    "svg_not_available": 400, "invalid_host": 400,
    # Guards of the edit engines behind the validated inputs above.
    "invalid_scale_size": 400, "invalid_strength": 400, "invalid_type": 400, "invalid_quality": 400,
    # Credit, plan and limits.
    "not_enough_credit": 402, "style_not_allowed": 403, "premium_required": 403, "enterprise_only": 403,
    "model_not_available": 403, "edit_limit_exceeded": 403, "prompt_limit_exceeded": 403,
    "special_limit_exceeded": 403, "simultaneous_limit_exceeded": 429,
    # Resources and their states.
    "not_found": 404, "image_not_found": 404, "style_not_found": 404, "collection_not_found": 404,
    "method_not_allowed": 405, "image_not_ready": 409, "edit_cancelled": 409, "duplicate_request_id": 409,
    "payload_too_large": 413, "image_too_large": 413, "unsupported_media_type": 415,
    # The /sandbox controls.
    "admin_token_required": 401, "wrong_admin_token": 401, "unknown_plan": 400, "user_not_found": 404,
    "email_taken": 409, "not_enterprise": 409,
    # Failures: a bug, a failed edit (refunded), and the fault controls' injected answers.
    "internal_error": 500, "edit_failed": 500, "rate_limited": 429, "service_unavailable": 503,
    # A full data folder: what could not be stored is not charged (see disk.py).
    "insufficient_storage": 507,
}
"""Every error name the sandbox can answer, with its HTTP status."""


class SandboxError(Exception):
    """A refusal by name (its status comes from ``ERRORS``), with a human message."""

    def __init__(self, name: str, message: str = "", *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message or name)
        self.status = ERRORS[name]
        self.name = name
        self.message = message or name.replace("_", " ")
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"success": False, "code": self.status, "data": self.name, "message": self.message}


Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def send_error(send: Send, error: SandboxError) -> None:
    """Answer an ASGI request with ``error`` from a middleware (outside FastAPI's handlers)."""
    body = json.dumps(error.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": error.status,
                "headers": headers + [(k.lower().encode(), v.encode()) for k, v in error.headers.items()]})
    await send({"type": "http.response.body", "body": body})


class Cancelled(Exception):
    """Raised inside a job when its edit was cancelled; never reaches a client as an error body."""
