"""Retries, timeouts and abandoned edits against the sandbox's fault controls and latency.

The rule under test: a request that may have reached the server is sent once; what the server
refused before doing any work (429, 503) or what never left (connect errors) is sent again.
"""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest

import imagekit
from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import EDIT_OUTCOMES, control, wait_for_edit, wait_idle, wait_until
from tests.utils.scripted_http import Counting
from tests.utils.users import make_user

CREATE = "/api/images/create"
ME = "/api/users/me"


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    """A small-image sandbox whose faults these tests change (reset after each test)."""
    with EmbeddedSandbox(tmp_path_factory.mktemp("faults"), base_size=256) as running:
        yield running


@pytest.fixture(scope="module")
def slow_box(tmp_path_factory):
    """A sandbox where every generation and edit takes 0.6 s (long enough to abandon)."""
    with EmbeddedSandbox(tmp_path_factory.mktemp("slow"), latency=0.6, base_size=256) as running:
        yield running


@pytest.fixture(scope="module")
def long_box(tmp_path_factory):
    """A sandbox where every generation and edit takes 3 s: an interrupt sent once an edit is seen
    running still finds it running, however slowly a busy machine schedules the test's threads (at
    0.6 s, the edit sometimes finished first and the interrupt had nothing to cancel)."""
    with EmbeddedSandbox(tmp_path_factory.mktemp("long"), latency=3.0, base_size=128) as running:
        yield running


@pytest.fixture(autouse=True)
def no_faults(box):
    yield
    control(box, "DELETE", "faults")


@pytest.fixture
def counted(user_client, box):
    """``counted(**options)``: (client on ``box`` for a fresh user, its Counting transport)."""

    def make(**options):
        transport = Counting()
        return user_client(box=box, transport=transport, **options), transport

    return make


def faults(box, **config) -> None:
    control(box, "POST", "faults", config)


def style_cost(client) -> tuple[int, int]:
    style = client.styles()[0]
    return style.style_id, style.credit_cost


def test_503s_are_retried_and_the_create_charged_once(counted, box):
    client, transport = counted()
    style, cost = style_cost(client)
    before = client.usage().current_credit
    faults(box, rate_503=0.5, retry_after=0, seed=1)  # seed 1: the first roll fails, the second passes
    res = client.create("a kite", style=style)
    control(box, "DELETE", "faults")
    assert transport.sent(CREATE) == 2 and len(res) == 1
    assert client.usage().current_credit == before - cost == res.credits_remaining


def test_503s_give_up_after_max_retries(counted, box):
    client, transport = counted()
    faults(box, rate_503=1.0, retry_after=0)
    with pytest.raises(imagekit.ServiceUnavailableError) as info:
        client.me()
    assert transport.sent(ME) == 3 and info.value.retry_after == 0


def test_429_waits_for_retry_after(counted, box):
    client, transport = counted()
    faults(box, rate_429=1.0, retry_after=0.2)
    started = time.monotonic()
    with pytest.raises(imagekit.RateLimitedError) as info:
        client.me()
    assert transport.sent(ME) == 3 and info.value.retry_after == 0.2
    assert time.monotonic() - started >= 0.4


def test_retry_after_beyond_the_cap_is_handed_to_the_caller(counted, box):
    client, transport = counted()
    faults(box, rate_429=1.0, retry_after=120)
    with pytest.raises(imagekit.RateLimitedError) as info:
        client.create("a kite", style=1)
    assert transport.sent(CREATE) == 1 and info.value.retry_after == 120


def test_a_post_dropped_after_it_ran_is_not_sent_again(counted, box):
    client, transport = counted()
    style, cost = style_cost(client)
    before = client.usage().current_credit
    faults(box, drop_rate=1.0, drop_phase="after")
    with pytest.raises(imagekit.APIConnectionError) as info:
        client.create("a kite", style=style)
    control(box, "DELETE", "faults")
    assert transport.sent(CREATE) == 1 and info.value.may_have_executed
    assert client.usage().current_credit == before - cost  # it ran once, and only once


def test_a_post_dropped_before_it_ran_is_not_sent_again_either(counted, box):
    client, transport = counted()
    style, _ = style_cost(client)
    before = client.usage().current_credit
    faults(box, drop_rate=1.0, drop_phase="before")
    with pytest.raises(imagekit.APIConnectionError):
        client.create("a kite", style=style)
    control(box, "DELETE", "faults")
    assert transport.sent(CREATE) == 1 and client.usage().current_credit == before


def test_a_dropped_get_is_retried(counted, box):
    client, transport = counted()
    faults(box, drop_rate=0.5, seed=1)
    assert client.me().user_id == client.user_id and transport.sent(ME) == 2


def test_a_post_is_sent_once_when_its_response_times_out(user_client, slow_box):
    transport = Counting()
    client = user_client(box=slow_box, transport=transport, timeout=0.2)  # the create takes 0.6 s
    style, cost = style_cost(client)
    before = client.usage().current_credit
    with pytest.raises(imagekit.APITimeoutError) as info:
        client.create("a kite", style=style)
    assert transport.sent(CREATE) == 1 and info.value.may_have_executed
    # On a busy machine the client can give up before the server has even taken the create: wait
    # until it has (the charge shows), then until it is done, and check it was the only one.
    wait_until(lambda: client.usage().current_credit != before, what="the create reached the server")
    wait_idle(slow_box, client.user_id)
    assert client.usage().current_credit == before - cost


def test_a_get_that_times_out_is_retried(counted, box):
    client, transport = counted(timeout=0.2)
    faults(box, latency=0.5)
    with pytest.raises(imagekit.APITimeoutError):
        client.me()
    assert transport.sent(ME) == 3


def test_the_simultaneous_limit_is_waited_out(user_client, slow_box):
    impatient = user_client(box=slow_box, retry_policy=imagekit.RetryPolicy(max_retries=0))
    style = impatient.styles()[0].style_id
    limit = impatient.me().plan.simultaneous_limit
    with ThreadPoolExecutor(limit + 2) as pool:
        outcomes = list(pool.map(lambda _: _attempt(lambda: impatient.create("rush", style=style)), range(limit + 2)))
    refused = [o for o in outcomes if isinstance(o, imagekit.SimultaneousLimitExceededError)]
    assert refused and all(o.retry_after == 1 for o in refused)
    patient = user_client(box=slow_box, retry_policy=imagekit.RetryPolicy(max_retries=6))
    style = patient.styles()[0].style_id  # styles belong to their user
    with ThreadPoolExecutor(limit + 2) as pool:
        results = list(pool.map(lambda _: patient.create("rush", style=style), range(limit + 2)))
    assert all(len(res) == 1 for res in results)


def _attempt(call):
    try:
        return call()
    except imagekit.APIError as exc:
        return exc


def _usage(client) -> tuple:
    usage = client.usage()
    return usage.current_credit, usage.edit_count


def _settled(box, user_id: int, request_id: str, client, before) -> None:
    """The cancelled edit has stopped on the server, and cost nothing."""
    wait_for_edit(box, user_id, request_id, EDIT_OUTCOMES)
    wait_idle(box, user_id)
    assert _usage(client) == before


def test_an_edit_past_its_timeout_is_cancelled_on_the_server(user_client, long_box):
    # (an edit of 3 s: its cancel, sent 0.2 s in, reaches it running however loaded the machine; with
    # 0.6 s it once arrived after the edit ended, "not_running", under a full suite's load)
    client = user_client(box=long_box)
    source = client.create("a kite", style=client.styles()[0]).images[0]
    before = _usage(client)
    with pytest.raises(imagekit.APITimeoutError) as info:
        source.upsize(timeout=0.2)
    assert info.value.cancel_status == "cancelled" and len(info.value.request_id) == 32
    _settled(long_box, client.user_id, info.value.request_id, client, before)


def test_keyboard_interrupt_cancels_a_sync_edit(long_box):
    user_id, key = make_user(long_box)
    with imagekit.Client(long_box.url, key) as client:
        source = client.create("a kite", style=client.styles()[0]).images[0]
        before = _usage(client)
        main = threading.main_thread().ident

        def interrupt_once_running() -> None:  # Ctrl+C while the edit runs on the server
            wait_for_edit(long_box, user_id, "interrupted-1", {"running"})
            signal.pthread_kill(main, signal.SIGINT)

        interrupter = threading.Thread(target=interrupt_once_running)
        # Ctrl+C raises KeyboardInterrupt, as in a user's process (a test runner's worker may ignore it).
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        interrupter.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                source.remove_bg(request_id="interrupted-1")
        finally:
            interrupter.join()
            signal.signal(signal.SIGINT, previous)
        _settled(long_box, user_id, "interrupted-1", client, before)


@pytest.mark.anyio
async def test_a_cancelled_task_cancels_its_async_edit(long_box):
    user_id, key = make_user(long_box)
    async with imagekit.AsyncClient(long_box.url, key) as client:
        source = (await client.create("a kite", style=(await client.styles())[0])).images[0]
        before = (await client.usage()).model_dump()
        async with anyio.create_task_group() as tasks:

            async def edit() -> None:
                await source.remove_bg(request_id="abandoned-1")

            tasks.start_soon(edit)  # abandoned once it runs on the server
            await anyio.to_thread.run_sync(wait_for_edit, long_box, user_id, "abandoned-1", {"running"})
            tasks.cancel_scope.cancel()
        assert tasks.cancel_scope.cancelled_caught
        await anyio.to_thread.run_sync(wait_for_edit, long_box, user_id, "abandoned-1", EDIT_OUTCOMES)
        await anyio.to_thread.run_sync(wait_idle, long_box, user_id)
        assert (await client.usage()).model_dump() == before
