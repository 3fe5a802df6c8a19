"""Assertions shared by the sandbox tests."""

from __future__ import annotations

import httpx
import pytest

on_both_databases = pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True, scope="session")
"""A module marked with this (``pytestmark = on_both_databases``) runs every test on a sandbox over
SQLite and again over PostgreSQL: the ``sandbox``, ``own_sandbox`` and ``sandbox_on`` fixtures follow."""


def db_args(url: str | None) -> list[str]:
    """The ``--db`` option of the sandbox commands for a database URL (none for SQLite)."""
    return ["--db", url] if url else []


def assert_error(response: httpx.Response, status: int, name: str) -> dict:
    """The response is the spec's error body with this status and error name."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["success"] is False and body["code"] == status and body["data"] == name, body
    assert isinstance(body.get("message"), str) and body["message"]
    return body
