"""Event loops: the sync client inside a running loop, the async client across loops (notebooks)."""

from __future__ import annotations

import asyncio

import imagekit
from tests.utils.scripted_http import SECRET, Script, reply

from .test_images import PNG

ME = {"userId": 1}


def test_the_sync_client_works_inside_a_running_loop():
    client = imagekit.Client("http://service.test", SECRET, transport=Script(reply(200, ME)).transport)

    async def cell() -> int:
        return client.me().user_id  # a notebook cell calling blocking code under the kernel's loop

    assert asyncio.run(cell()) == 1


def test_the_async_client_survives_a_new_event_loop():
    client = imagekit.AsyncClient("http://service.test", SECRET, transport=Script(reply(200, ME)).transport)
    assert asyncio.run(client.me()).user_id == 1
    first = client._http._client_
    assert asyncio.run(client.me()).user_id == 1  # a fresh loop: the old pool is left behind
    assert client._http._client_ is not first
    asyncio.run(client.aclose())


def test_async_images_display_from_inside_a_running_loop():
    client = imagekit.AsyncClient("http://service.test", SECRET, transport=Script(reply(200, PNG)).transport)

    async def cell() -> bytes | None:
        return client.image(3)._repr_png_()  # IPython calls reprs synchronously, under its running loop

    assert asyncio.run(cell()).startswith(b"\x89PNG")
