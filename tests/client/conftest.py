"""Fixtures for the client tests: one test body drives both clients.

``clients`` builds a Client, or an AsyncClient wrapped in ``Blocking`` (its coroutines run to
completion in an anyio portal), depending on the ``kind`` parameter. ``Script`` answers requests
for ``httpx.MockTransport`` and records them, for failures the sandbox cannot produce.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal

import imagekit
from imagekit.images import _Result
from imagekit.resources._common import AsyncNamespace
from tests.conftest import make_user
from tests.helpers import QUICK_RETRIES, TLS


async def _await(awaitable: Any) -> Any:
    return await awaitable


class Blocking:
    """An async imagekit object whose awaitables are run in a portal: async code, sync test body."""

    def __init__(self, target: Any, portal: Any) -> None:
        self._target, self._portal = target, portal

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value) or isinstance(value, type):
            return self._wrap(value)

        def call(*args: Any, **kwargs: Any) -> Any:
            result = value(*args, **kwargs)
            if inspect.isawaitable(result):
                result = self._portal.call(_await, result)
            return self._wrap(result)

        return call

    def _wrap(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._wrap(item) for item in value]
        if isinstance(value, (imagekit.AsyncClient, imagekit.AsyncImage, _Result, AsyncNamespace)):
            return Blocking(value, self._portal)
        return value

    def __iter__(self) -> Iterator[Any]:
        return iter(self._wrap(list(self._target)))

    def __len__(self) -> int:
        return len(self._target)

    def __getitem__(self, index: int) -> Any:
        return self._wrap(self._target[index])

    def __repr__(self) -> str:
        return repr(self._target)

    @property
    def unwrapped(self) -> Any:
        """The async object itself."""
        return self._target


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


def reply(status: int = 200, body: Any = None, headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
    """A canned response; ``body`` is JSON-encoded unless bytes."""
    if isinstance(body, bytes):
        return httpx.Response(status, content=body, headers=headers, **kwargs)
    return httpx.Response(status, json=body, headers=headers, **kwargs)


def error(status: int, name: str, headers: dict[str, str] | None = None) -> httpx.Response:
    """The spec's error body."""
    return reply(status, {"success": False, "code": status, "data": name, "message": name.replace("_", " ")}, headers)


class Script:
    """A MockTransport handler: answers from a queue (responses, exceptions or callables) and
    records every request. Requests to cancelEdit are answered by ``on_cancel`` (a JSON value or a
    response) and recorded apart, in ``cancels``."""

    def __init__(self, *answers: Any, on_cancel: Any = "cancelled") -> None:
        self.answers = list(answers)
        self.on_cancel = on_cancel
        self.requests: list[httpx.Request] = []
        self.cancels: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if "/cancelEdit/" in request.url.path:
            self.cancels.append(request.url.raw_path.decode().rsplit("/", 1)[1])
            return self.on_cancel if isinstance(self.on_cancel, httpx.Response) else reply(200, self.on_cancel)
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if callable(answer) and not isinstance(answer, httpx.Response):
            answer = answer(request)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def body(self, index: int = -1) -> Any:
        """The JSON body of a recorded request."""
        return json.loads(self.requests[index].content)


@pytest.fixture
def mock(clients: Callable[..., Any]) -> Callable[..., Any]:
    """``mock(script, **options)``: a client of this test's kind whose requests ``script`` answers."""

    def make(script: Script, **options: Any) -> Any:
        return clients("http://service.test", "sk-test-SECRET-0123456789", transport=script.transport, **options)

    return make


SECRET = "sk-test-SECRET-0123456789"


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


class Counting(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """A real transport that records every request it sends (sync or async)."""

    def __init__(self) -> None:
        self._sync, self._async = httpx.HTTPTransport(verify=TLS), httpx.AsyncHTTPTransport(verify=TLS)
        self.requests: list[httpx.Request] = []

    def sent(self, path: str) -> int:
        """How many requests went to ``path``."""
        return sum(request.url.path == path for request in self.requests)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self._sync.handle_request(request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return await self._async.handle_async_request(request)

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        await self._async.aclose()


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (the loop notebooks use)."""
    return "asyncio"
