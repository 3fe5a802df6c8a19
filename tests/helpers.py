"""Assertions shared by the sandbox tests."""

from __future__ import annotations

import httpx


def assert_error(response: httpx.Response, status: int, name: str) -> dict:
    """The response is the spec's error body with this status and error name."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["success"] is False and body["code"] == status and body["data"] == name, body
    assert isinstance(body.get("message"), str) and body["message"]
    return body
