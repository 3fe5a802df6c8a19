"""Fixtures for the client tests: one test body drives both clients.

``clients`` builds a Client, or an AsyncClient wrapped in ``Blocking`` (its coroutines run to
completion in an anyio portal), depending on the ``kind`` parameter. ``Script`` answers requests
for ``httpx.MockTransport`` and records them, for failures the sandbox cannot produce.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

import imagekit
from tests.helpers import QUICK_RETRIES
from tests.utils.scripted_http import Blocking, Script
from tests.utils.users import make_user


@pytest.fixture(params=["sync", "async"])
def kind(request) -> str:
    """Which client a test body runs against."""
    return request.param


@pytest.fixture
def clients(kind: str) -> Iterator[Callable[..., Any]]:
    """``clients(base_url, api_key, **options)``: a client of this test's kind, closed afterwards."""
    opened: list[Any] = []
    with start_blocking_portal() as portal:

        def make(base_url: str, api_key: str, **options: Any) -> Any:
            options.setdefault("retry_policy", QUICK_RETRIES)
            if kind == "sync":
                client = imagekit.Client(base_url, api_key, **options)
                opened.append(client.close)
                return client
            client = imagekit.AsyncClient(base_url, api_key, **options)
            opened.append(lambda: portal.call(client.aclose))
            return Blocking(client, portal)

        yield make
        for close in opened:
            close()


@pytest.fixture
def mock(clients: Callable[..., Any]) -> Callable[..., Any]:
    """``mock(script, **options)``: a client of this test's kind whose requests ``script`` answers."""

    def make(script: Script, **options: Any) -> Any:
        return clients("http://service.test", "sk-test-SECRET-0123456789", transport=script.transport, **options)

    return make


# --- against a real sandbox -------------------------------------------------------------------


@pytest.fixture
def user_client(clients: Callable[..., Any], sandbox: Any) -> Callable[..., Any]:
    """``user_client(plan="standard", box=None, **options)``: a client of this test's kind for a fresh user.

    The client has ``user_id`` and ``box`` attributes for the sandbox controls.
    """

    def make(plan: str = "standard", box: Any = None, **options: Any) -> Any:
        box = box or sandbox
        user_id, key = make_user(box, plan)
        client = clients(box.url, key, **options)
        client.__dict__.update(user_id=user_id, box=box)
        return client

    return make


@pytest.fixture
def ik(user_client: Callable[..., Any]) -> Any:
    """A client of this test's kind for a fresh standard user of the shared sandbox."""
    return user_client()


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (the loop notebooks use)."""
    return "asyncio"
