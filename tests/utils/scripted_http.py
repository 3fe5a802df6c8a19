"""Scripted HTTP for the client tests: canned answers for failures the sandbox cannot produce,
a transport that counts what it sends, and ``Blocking`` (an async object driven from a sync test)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from typing import Any

import httpx

import imagekit
from imagekit.images import _Result
from imagekit.resources._common import AsyncNamespace
from tests.helpers import TLS


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


SECRET = "sk-test-SECRET-0123456789"


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
