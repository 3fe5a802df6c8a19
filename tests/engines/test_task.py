"""The task an engine runs (``imagekit.engines.task.send``), on a worker's side: a create is made
once its ticket is taken, and not at all when taking it lasted past ``CLAIM_PATIENCE`` (a worker
paused while taking it: the caller has by then looked for the request's images and sent it again)."""

from __future__ import annotations

import time

import httpx
import pytest

import imagekit
from imagekit.engines.task import Outgoing, send
from tests.helpers import balance
from tests.utils.service import public_style, server_images
from tests.utils.users import make_user


def a_create(sandbox, key: str) -> Outgoing:
    """The create request imagekit's client builds (caught before it leaves)."""
    caught: list[httpx.Request] = []

    def catch(request: httpx.Request) -> httpx.Response:
        caught.append(request)
        raise httpx.ConnectError("caught", request=request)

    with imagekit.Client(sandbox.url, key, transport=httpx.MockTransport(catch), max_retries=0) as ik, \
            pytest.raises(imagekit.ImagekitError):
        ik.create("a kite over the dunes", style=public_style(sandbox))
    (request,) = [r for r in caught if r.method == "POST"]
    return Outgoing.of(request, request.read())


def test_a_task_whose_ticket_came_late_sends_nothing_and_says_the_request_never_left(sandbox):
    user_id, key = make_user(sandbox)
    credits, outgoing = balance(sandbox, key), a_create(sandbox, key)

    def slow() -> bool:  # a worker paused while its take of the ticket was answered
        time.sleep(0.3)
        return True

    late = send(outgoing, slow, patience=0.2)
    with pytest.raises(httpx.ConnectError, match=r"its ticket came \d+\.\d s after it was asked for \(more than "
                                                 r"0\.2 s\): the task sent nothing"):
        late.response(outgoing.request())
    assert server_images(sandbox, user_id) == [] and balance(sandbox, key) == credits

    taken = send(outgoing, lambda: False)  # another run of the task had the ticket
    assert taken.taken and server_images(sandbox, user_id) == []

    made = send(outgoing, lambda: True)  # taken in time: the very same request is made, once
    assert made.response(outgoing.request()).status_code == 200
    assert len(server_images(sandbox, user_id)) == 1 and balance(sandbox, key) < credits
