"""Fresh users of a sandbox (embedded or served), made through its controls."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import httpx

from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import TLS

if TYPE_CHECKING:
    from tests.sandbox.serving import Served


_emails = itertools.count()


def make_user(box: EmbeddedSandbox | Served, plan: str = "standard") -> tuple[int, str]:
    """A fresh user on ``plan`` in ``box`` (embedded or served); returns (user id, API key)."""
    response = httpx.post(f"{box.url}/sandbox/users", json={"email": f"user{next(_emails)}@test.local", "plan": plan},
                          verify=TLS, timeout=120)  # httpx's 5 s is too short on a loaded machine
    response.raise_for_status()
    return response.json()["userId"], response.json()["apiKey"]
