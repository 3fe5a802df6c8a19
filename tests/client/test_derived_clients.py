"""Clients derived from a client (``with_options``, ``copy``, ``to_async``) keep its transport and
ledger, change only what they are given, and never close what they borrowed."""

from __future__ import annotations

import anyio
import httpx
import pytest

import imagekit
from tests.helpers import QUICK_RETRIES
from tests.utils.scripted_http import Counting
from tests.utils.users import make_user


class BlockingOnly(httpx.BaseTransport):
    """A real blocking transport that counts what it sends and whether it was closed."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.paths: list[str] = []
        self.closed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return self._inner.handle_request(request)

    def close(self) -> None:
        self.closed = True
        self._inner.close()


def test_with_options_changes_what_it_is_given_and_keeps_the_rest(sandbox):
    transport = Counting()
    with imagekit.Client(sandbox.url, make_user(sandbox)[1], transport=transport, retry_policy=QUICK_RETRIES, timeout=30,
                         platform="web", ledger=False) as ik:
        fast = ik.with_options(timeout=5, max_retries=0)
        assert (fast.config.timeout, fast.config.retry.max_retries) == (5, 0)
        assert fast.config.retry.backoff_base == QUICK_RETRIES.backoff_base  # max_retries changed the caller's policy only there
        assert (fast.config.platform, fast.config.base_url) == ("web", ik.config.base_url)
        assert ik.config.timeout == 30  # the original is untouched
        assert ik.copy().config == ik.config
        fast.me()
        fast.close()
        ik.me()  # the copy's close left the shared transport open
    assert transport.sent("/api/users/me") == 2


def test_with_options_rejects_unknown_options(sandbox):
    with imagekit.Client(sandbox.url, "k", ledger=False) as ik, pytest.raises(TypeError, match="timeuot"):
        ik.with_options(timeuot=5)  # type: ignore[call-arg]


def test_to_async_sends_through_a_blocking_only_transport_from_threads(sandbox):
    transport = BlockingOnly()
    ik = imagekit.Client(sandbox.url, make_user(sandbox)[1], transport=transport, ledger=False)

    async def main() -> tuple[str | None, bytes]:
        async with ik.to_async() as aik:
            result = await aik.create("a kite", style=(await aik.styles())[0].style_id, count=1)
            return (await aik.me()).email, await result.images[0].read("png")

    email, png = anyio.run(main)
    assert email == ik.me().email
    assert png.startswith(b"\x89PNG")  # a streamed body, read chunk by chunk from a worker thread
    assert transport.paths.count("/api/users/me") == 2 and "/api/images/create" in transport.paths
    assert not transport.closed  # closing the twin left the owner's transport alone
    ik.close()
    assert transport.closed


def test_an_async_client_refuses_a_blocking_only_transport_with_the_way_out():
    with pytest.raises(TypeError, match="to_async"):
        imagekit.AsyncClient("http://service.test", "k", transport=BlockingOnly(), ledger=False)


def test_derived_clients_record_into_the_same_ledger_account(sandbox, tmp_path):
    ik = imagekit.Client(sandbox.url, make_user(sandbox)[1], ledger=tmp_path / "ledger.sqlite")
    twin, copy = ik.to_async(), ik.with_options(timeout=5)
    assert ik.ledger is not None and twin.ledger is not None and copy.ledger is not None
    assert ik.ledger.account == twin.ledger.account == copy.ledger.account
    assert ik.ledger.path == twin.ledger.path == copy.ledger.path
    other = ik.with_options(api_key="another-key")
    assert other.ledger is not None and other.ledger.account != ik.ledger.account  # another account, same file
    for client in (ik, copy, other):
        client.close()


def test_a_batch_runs_through_the_callers_transport(sandbox):
    transport = BlockingOnly()
    with imagekit.Client(sandbox.url, make_user(sandbox)[1], transport=transport, ledger=False) as ik:
        style = ik.styles()[0].style_id
        batch = ik.batch(["a fox", "a kite"], style=style, count=1)
        batch.run(progress=False)
        assert batch.to_pandas()["status"].tolist() == ["COMPLETED", "COMPLETED"]
    assert transport.paths.count("/api/images/create") == 2
