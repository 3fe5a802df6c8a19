"""``imagekit sandbox serve --workers 2`` on a real PostgreSQL: every rule holds across the workers.

Each request gets its own connection (the kernel may hand connections opened together to one
worker), and every test checks that both workers really answered (``--worker-header``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx
import psycopg
import pytest

from tests.helpers import TLS, assert_error, balance
from tests.utils.users import make_user

from . import Served, imagekit, serving

CREATES = 80
WAVES = 6


@dataclass
class SlotWatch:
    """Reads ``running_slots`` from the database side while requests run: the most one user had at
    once, and which processes held them."""

    url: str
    user_id: int
    peak: int = 0
    pids: set[int] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as db:
            while not self._stop.is_set():
                rows = db.execute("SELECT pid FROM running_slots WHERE user_id = %s", (self.user_id,)).fetchall()
                self.peak = max(self.peak, len(rows))
                self.pids |= {pid for (pid,) in rows}
                time.sleep(0.005)  # sampling: a slot lives at least the sandbox's latency (3 s)

    @contextmanager
    def watching(self) -> Iterator[SlotWatch]:
        thread = threading.Thread(target=self.run)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(30)


@pytest.fixture(scope="module")
def two_workers(postgres, tmp_path_factory) -> Iterator[tuple[Served, str]]:
    """One served sandbox for the module (each test has its own user): 2 workers, 3 s latency."""
    url, folder = postgres.new_database(), tmp_path_factory.mktemp("workers")
    imagekit("sandbox", "init", "--data", str(folder), "--db", url)
    with serving(folder, "--db", url, "--workers", "2", "--worker-header", "--latency", "3",
                 "--base-size", "256") as served:
        yield served, url


def call(served: Served, key: str, method: str, path: str, **options: object) -> httpx.Response:
    """One request on a connection of its own."""
    with httpx.Client(base_url=served.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as own:
        return own.request(method, path, **options)


@pytest.mark.slow(10)
def test_eighty_creates_across_two_workers_keep_the_limit_and_the_balance(two_workers):
    served, url = two_workers
    user_id, key = make_user(served, "pro")
    limit = call(served, key, "GET", "/api/users/me").json()["Plan"]["simultaneousLimit"]
    style = call(served, key, "GET", "/api/users/me/styles").json()[0]
    before = balance(served, key)

    responses: list[httpx.Response] = []
    with SlotWatch(url, user_id).watching() as watch, ThreadPoolExecutor(CREATES) as pool:
        for _ in range(WAVES):  # which worker wins a slot is chance: another wave until both have held one
            responses += pool.map(lambda _: call(served, key, "POST", "/api/images/create",
                                                 json={"prompt": "rush", "styleId": style["styleId"]}),
                                  range(CREATES))
            if len(watch.pids) == 2:
                break

    statuses = [r.status_code for r in responses]
    assert set(statuses) <= {200, 429} and statuses.count(200) >= limit, statuses
    for refused in (r for r in responses if r.status_code == 429):
        assert_error(refused, 429, "simultaneous_limit_exceeded")
    assert len({r.headers["X-Sandbox-Worker"] for r in responses}) == 2  # both workers answered
    assert len(watch.pids) == 2 and watch.peak == limit  # both ran creates; never more than the limit
    charged = sum(int(r.headers["X-Credits-Consumed"]) for r in responses if r.status_code == 200)
    assert charged == style["creditCost"] * statuses.count(200)  # the style's price, once per image
    assert balance(served, key) == before - charged
    stats = httpx.get(f"{served.url}/sandbox/stats", verify=TLS, timeout=120).json()["peakConcurrency"][str(user_id)]
    assert stats == limit
    with psycopg.connect(url) as db:  # the database agrees: what was charged, nothing running
        spent = db.execute("SELECT sum(credits - refunded) FROM charges WHERE user_id = %s", (user_id,)).fetchone()
        running = db.execute("SELECT count(*) FROM running_slots").fetchone()
    assert spent == (charged,) and running == (0,)


@pytest.mark.slow(10)
def test_cancels_reach_edits_running_in_the_other_worker_and_refund_once(two_workers):
    served, url = two_workers
    _, key = make_user(served, "pro")
    style = call(served, key, "GET", "/api/users/me/styles").json()[0]["styleId"]
    image_id = call(served, key, "POST", "/api/images/create",
                    json={"prompt": "a kite", "styleId": style}).json()["images"][0]["imageId"]
    before, edits_before = balance(served, key), call(served, key, "GET", "/api/users/me/usage").json()["editCount"]
    crossed = 0
    for round_ in range(4):
        ids = [f"cross-{round_}-{n}" for n in range(3)]
        with ThreadPoolExecutor(2 * len(ids)) as pool:  # the edits and their cancels side by side
            edits = [pool.submit(call, served, key, "POST", f"/api/images/{image_id}/retry",
                                 headers={"X-Request-Id": rid}) for rid in ids]
            with psycopg.connect(url, autocommit=True) as db:  # cancel once each edit is running
                while db.execute("SELECT count(*) FROM request_ids WHERE request_id = ANY(%s) AND state = 'running'",
                                 (ids,)).fetchone() != (len(ids),):
                    time.sleep(0.01)  # polling the other processes' state: nothing to wait on
            cancels = list(pool.map(lambda rid: call(served, key, "POST", f"/api/images/cancelEdit/{rid}"), ids))
        for edit, cancel in zip(edits, cancels, strict=True):
            assert cancel.json() == "cancelled", (edit.result().text, cancel.headers)
            assert_error(edit.result(), 409, "edit_cancelled")
            crossed += edit.result().headers["X-Sandbox-Worker"] != cancel.headers["X-Sandbox-Worker"]
    assert crossed > 0  # some cancels were answered by the worker that was not running the edit
    assert balance(served, key) == before
    assert call(served, key, "GET", "/api/users/me/usage").json()["editCount"] == edits_before
    with psycopg.connect(url) as db:
        rows = db.execute("SELECT credits, refunded, status FROM charges WHERE request_id LIKE 'cross-%'").fetchall()
    assert len(rows) == 12 and all(credits == refunded and status == "refunded" for credits, refunded, status in rows)


def test_a_clock_advanced_in_one_worker_is_the_clock_of_both(two_workers):
    served, _ = two_workers
    seen: dict[str, float] = {}
    httpx.post(f"{served.url}/sandbox/clock/advance", json={"seconds": 3600}, verify=TLS, timeout=120).raise_for_status()
    for _ in range(40):  # each on its own connection, until both workers have answered
        read = httpx.get(f"{served.url}/sandbox/clock", verify=TLS, timeout=120)
        seen[read.headers["X-Sandbox-Worker"]] = read.json()["offsetSeconds"]
    assert len(seen) == 2 and set(seen.values()) == {3600.0}
    httpx.post(f"{served.url}/sandbox/faults", json={"rate_503": 1.0}, verify=TLS, timeout=120).raise_for_status()
    refused = {r.headers["X-Sandbox-Worker"]: r.status_code for r in
               (httpx.get(f"{served.url}/api/users/me", verify=TLS, timeout=120) for _ in range(40))}
    assert len(refused) == 2 and set(refused.values()) == {503}
    httpx.delete(f"{served.url}/sandbox/faults", verify=TLS, timeout=120).raise_for_status()
    assert {httpx.get(f"{served.url}/api/users/me", verify=TLS, timeout=120).status_code for _ in range(20)} == {403}  # no key: served again


def test_the_workers_read_again_after_the_database_dropped_their_connections(two_workers):
    served, url = two_workers
    _, key = make_user(served, "pro")
    assert balance(served, key) > 0
    with psycopg.connect(url, autocommit=True) as db:  # as a database restart or an idle timeout would
        dropped = db.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                             "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()
    assert dropped is not None and dropped[0] >= 2  # at least each worker's kept read connection
    answers = [call(served, key, "GET", "/api/users/me") for _ in range(20)]
    assert {answer.status_code for answer in answers} == {200}
    assert len({answer.headers["X-Sandbox-Worker"] for answer in answers}) == 2
