"""A team sandbox (``serve --workers 2`` on PostgreSQL) whose database restarts (``pg_ctl restart -m
fast``), or one of whose workers is killed (-9), while clients create and edit: answers are 200, 429
or 503 with Retry-After (never 500), the workers reconnect by themselves, no concurrency slot stays
taken, and the balance ends equal to the price of the work that completed.

Each test gathers its figures (answers by status, images and edits completed against charged, the
balance change against the completed work's price, seconds until the account's whole limit is
usable again), prints them, and shows them with every assertion."""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest

from imagekit.sandbox import EmbeddedSandbox
from imagekit.sandbox.store.outage import OUTAGE_REFUND
from tests.helpers import TLS, assert_error, balance, wait_until
from tests.postgres import PostgresServer

from ..serving import Served, imagekit, serving

pytestmark = pytest.mark.postgres  # clusters of its own: it stops and restarts them


RESTARTS = 3
_request_ids = itertools.count()


@contextmanager
def team_sandbox(folder: Path, url: str, latency: float) -> Iterator[Served]:
    """``serve --workers 2`` over ``url``, its output in a log file beside the data folder."""
    imagekit("sandbox", "init", "--data", str(folder / "data"), "--db", url)
    with serving(folder / "data", "--db", url, "--workers", "2", "--worker-header", "--latency", str(latency),
                 "--base-size", "256", log=folder / "serve.log") as served:
        yield served


def call(served: Served | EmbeddedSandbox, key: str, method: str, path: str, **options: object) -> httpx.Response:
    """One request on a connection of its own (so the kernel spreads them over both workers)."""
    with httpx.Client(base_url=served.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as own:
        return own.request(method, path, **options)


@dataclass
class Load:
    """Clients creating (style ``style``) and retrying ``source``, each on its own thread, until stopped;
    what they were answered, by kind and status (``transport`` when the connection died)."""

    served: Served
    key: str
    style: int
    source: int
    answers: Counter[str] = field(default_factory=Counter)
    images_completed: int = 0
    edits_completed: int = 0
    died: dict[str, list[str]] = field(default_factory=lambda: {"create": [], "edit": []})
    """Request ids (edits) or prompts (creates) whose connection died under them."""
    refused: list[httpx.Response] = field(default_factory=list)
    created: list[tuple[float, float]] = field(default_factory=list)
    """(sent, answered) monotonic times of each create answered 200."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)

    def client(self, kind: str) -> None:
        while not self._stop.is_set():
            name = f"{kind}-{next(_request_ids)}"
            sent = time.monotonic()
            try:
                if kind == "edit":
                    answer = call(self.served, self.key, "POST", f"/api/images/{self.source}/retry",
                                  headers={"X-Request-Id": name})
                else:
                    answer = call(self.served, self.key, "POST", "/api/images/create",
                                  json={"prompt": name, "styleId": self.style})
            except httpx.TransportError:
                with self._lock:
                    self.answers[f"{kind} transport"] += 1
                    self.died[kind].append(name)
                continue
            with self._lock:
                self.answers[f"{kind} {answer.status_code}"] += 1
                if answer.status_code == 200 and kind == "create":
                    self.images_completed += sum(image["generationStatus"] == "COMPLETED"
                                                 for image in answer.json()["images"])
                    self.created.append((sent, time.monotonic()))
                elif answer.status_code == 200:
                    self.edits_completed += 1
                elif answer.status_code != 429:
                    self.refused.append(answer)
            if answer.status_code in (429, 503):
                time.sleep(0.2)  # shorter than Retry-After asks: the clients keep meeting the outage

    @contextmanager
    def running(self, creators: int, editors: int) -> Iterator[Load]:
        threads = [threading.Thread(target=self.client, args=(kind,))
                   for kind in ["create"] * creators + ["edit"] * editors]
        for thread in threads:
            thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            for thread in threads:
                thread.join(180)

    def created_after(self, moment: float) -> float:
        """Seconds from ``moment`` until a create sent after it was answered 200 (infinity: none was)."""
        with self._lock:
            return min((answered - moment for sent, answered in self.created if sent >= moment), default=float("inf"))

    def count(self, status: str) -> int:
        with self._lock:
            return sum(n for kind, n in self.answers.items() if kind.endswith(f" {status}"))


@dataclass
class Figures:
    """What a test checks, printed once gathered."""

    answers: dict[str, int]
    images_completed: int
    images_charged: float
    edits_completed: int
    edits_charged: float
    balance_change: int
    completed_price: int
    usable_after: float
    """Seconds from the fault until the account was usable again (each test says how that is read)."""

    def __str__(self) -> str:
        return (f"answers {self.answers}; images completed {self.images_completed}, charged "
                f"{self.images_charged:g}; edits completed {self.edits_completed}, charged {self.edits_charged:g}; "
                f"balance change {self.balance_change} against completed work's price {self.completed_price}; "
                f"usable again {self.usable_after:.1f} s after the fault")


def settled(url: str, user_id: int, pid: int | None) -> bool:
    """Nothing of the user holds a slot (in process ``pid``, if given) and no image of theirs is
    PENDING (read in the database)."""
    with psycopg.connect(url) as db:
        slots = db.execute("SELECT count(*) FROM running_slots WHERE user_id = %s AND pid = coalesce(%s, pid)",
                           (user_id, pid)).fetchone()
        pending = db.execute("SELECT count(*) FROM images WHERE owner_id = %s AND status = 'PENDING'",
                             (user_id,)).fetchone()
    return slots == (0,) and (pid is not None or pending == (0,))


def wait_settled(url: str, user_id: int, pid: int | None = None) -> float:
    """Seconds until no slot of the user (held by ``pid``, if given) is taken and no image of theirs
    is PENDING; infinity if that takes more than 150 s."""
    started, deadline = time.monotonic(), time.monotonic() + 150
    while not settled(url, user_id, pid):
        if time.monotonic() > deadline:
            return float("inf")
        time.sleep(0.1)  # another process settles them: nothing to wait on but the database
    return time.monotonic() - started


def assert_whole_limit_usable(served: Served, key: str, style: int) -> None:
    """The plan's whole limit of creates, sent at once, is answered 200."""
    limit = call(served, key, "GET", "/api/users/me").json()["Plan"]["simultaneousLimit"]
    burst: list[httpx.Response] = []
    threads = [threading.Thread(target=lambda: burst.append(call(served, key, "POST", "/api/images/create",
                                                                 json={"prompt": "after", "styleId": style})))
               for _ in range(limit)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert [answer.status_code for answer in burst] == [200] * limit, [answer.text[:200] for answer in burst]


@dataclass(frozen=True)
class Account:
    """What the database and the API say of one account at a moment."""

    balance: int
    create_credits: int
    """Credits its creates were charged and kept (not refunded)."""
    edit_credits: int
    images: int
    """Its COMPLETED generated images."""
    edits: int
    """Its COMPLETED edit results."""

    @classmethod
    def read(cls, served: Served, key: str, url: str, user_id: int) -> Account:
        with psycopg.connect(url) as db:
            credits = dict(db.execute("SELECT operation = 'create', coalesce(sum(credits - refunded), 0) FROM charges "
                                      "WHERE user_id = %s GROUP BY operation = 'create'", (user_id,)).fetchall())
            made = dict(db.execute("SELECT kind, count(*) FROM images WHERE owner_id = %s AND status = 'COMPLETED' "
                                   "GROUP BY kind", (user_id,)).fetchall())
        return cls(balance(served, key), credits.get(True, 0), credits.get(False, 0), made.get("generation", 0),
                   made.get("edit", 0))


def new_account(served: Served | EmbeddedSandbox) -> tuple[int, str, dict, int, int]:
    """A pro user, its first style, one image of its own to edit, and the price of an edit."""
    made = httpx.post(f"{served.url}/sandbox/users", json={"email": f"outage-{os.getpid()}-{next(_request_ids)}@x.io",
                                                           "plan": "pro"}, verify=TLS, timeout=120).raise_for_status().json()
    user_id, key = made["userId"], made["apiKey"]
    style = call(served, key, "GET", "/api/users/me/styles").json()[0]
    source = call(served, key, "POST", "/api/images/create", json={"prompt": "a kite", "styleId": style["styleId"]})
    edit = call(served, key, "POST", f"/api/images/{source.json()['images'][0]['imageId']}/retry")
    return user_id, key, style, source.json()["images"][0]["imageId"], int(edit.headers["X-Credits-Consumed"])


def figures(load: Load, before: Account, after: Account, image_price: int, edit_price: int,
            usable_after: float) -> Figures:
    return Figures(answers=dict(sorted(load.answers.items())), images_completed=load.images_completed,
                   images_charged=(after.create_credits - before.create_credits) / image_price,
                   edits_completed=load.edits_completed,
                   edits_charged=(after.edit_credits - before.edit_credits) / edit_price,
                   balance_change=before.balance - after.balance,
                   completed_price=load.images_completed * image_price + load.edits_completed * edit_price,
                   usable_after=usable_after)


@pytest.mark.slow(20)
def test_a_postgresql_restart_answers_503_and_leaves_no_slot_or_charge_behind(tmp_path):
    """Figures: answers by status (200, 429, 503 only; at least one 503, each with Retry-After), images
    and edits completed = charged, balance change = completed work's price, and the seconds from the
    end of the last of three restarts until a create sent after it is answered 200 (latency 1 s).
    Afterwards nothing is left running or PENDING, the plan's whole limit of creates sent at once is
    answered 200, and both workers answer."""
    with PostgresServer() as cluster:  # its own: restarting the session's would cut other tests' connections
        url = cluster.new_database()
        with team_sandbox(tmp_path, url, latency=1) as served:
            user_id, key, style, source, edit_price = new_account(served)
            before = Account.read(served, key, url, user_id)
            load = Load(served, key, style["styleId"], source)
            with load.running(creators=6, editors=2):
                wait_until(lambda: load.count("200") >= 8, timeout=120, what="the load under way")
                for _ in range(RESTARTS):
                    time.sleep(1.5)
                    cluster.restart()
                restarted = time.monotonic()
                time.sleep(4)
            left = wait_settled(url, user_id)
            seen = figures(load, before, Account.read(served, key, url, user_id), style["creditCost"], edit_price,
                           load.created_after(restarted))
            print(f"\n{RESTARTS} restarts: {seen}; settled {left:.1f} s after the load stopped")
            assert left < float("inf"), seen
            assert_whole_limit_usable(served, key, style["styleId"])
            workers = {call(served, key, "GET", "/api/users/me").headers["X-Sandbox-Worker"] for _ in range(40)}

    assert {kind.split()[1] for kind in seen.answers} <= {"200", "429", "503"}, seen
    assert load.count("503") >= 1, f"the outage was never met: {seen}"
    for refusal in load.refused:
        assert_error(refusal, 503, "service_unavailable")
        assert int(refusal.headers["Retry-After"]) >= 1
    assert seen.images_charged == seen.images_completed and seen.edits_charged == seen.edits_completed, seen
    assert seen.balance_change == seen.completed_price, seen
    assert len(workers) == 2  # both reconnected by themselves


@pytest.mark.slow(30)
def test_a_worker_killed_with_creates_and_edits_in_flight_leaves_no_slot_or_charge_behind(postgres, tmp_path):
    """Figures: answers by status (200, 429, or a dropped connection for what the killed worker ran;
    never 500), images and edits completed = charged (work committed just before the kill, whose
    answer was lost, may count as completed), balance change = completed work's price, and the seconds
    from the kill until the killed worker's slots are free (their leases expire). Afterwards nothing
    is left running or PENDING and the plan's whole limit of creates sent at once is answered 200."""
    url = postgres.new_database()
    with team_sandbox(tmp_path, url, latency=3) as served:
        user_id, key, style, source, edit_price = new_account(served)
        before = Account.read(served, key, url, user_id)
        load = Load(served, key, style["styleId"], source)
        with load.running(creators=3, editors=3), psycopg.connect(url, autocommit=True) as db:
            deadline = time.monotonic() + 120
            while True:  # a worker running a create and an edit at once
                held = db.execute("SELECT pid, count(*) FILTER (WHERE request_id IS NULL AND charge_id IS NOT NULL), "
                                  "count(request_id) "
                                  "FROM running_slots WHERE user_id = %s GROUP BY pid", (user_id,)).fetchall()
                victim = next((pid for pid, creates, edits in held if creates and edits), None)
                if victim is not None:
                    break
                assert time.monotonic() < deadline, "no worker ever ran a create and an edit at once"
                time.sleep(0.05)
            os.kill(victim, signal.SIGKILL)
            released = wait_settled(url, user_id, victim)
        left = wait_settled(url, user_id)
        after = Account.read(served, key, url, user_id)
        seen = figures(load, before, after, style["creditCost"], edit_price, released)
        images, edits = after.images - before.images, after.edits - before.edits
        print(f"\nkill -9 of worker {victim}: {seen}; completed in the database: {images} images, {edits} edits")
        assert released < float("inf") and left < float("inf"), seen
        with psycopg.connect(url) as db:  # which of the lost edits the server ever took
            arrived = {rid for (rid,) in db.execute("SELECT request_id FROM request_ids WHERE user_id = %s",
                                                    (user_id,))}
        lost_edits = {rid: call(served, key, "POST", f"/api/images/cancelEdit/{rid}").json()
                      for rid in load.died["edit"]}
        assert_whole_limit_usable(served, key, style["styleId"])

    assert {kind.split()[1] for kind in seen.answers} <= {"200", "429", "transport"}, seen
    assert load.died["create"] and load.died["edit"], seen  # both kinds were in flight in the killed worker
    # An edit the killed worker ran was settled as failed: a cancel has nothing left to stop. One that
    # still waited in its socket's queue never arrived: the cancel is kept for it, as for any early one.
    assert {rid: "not_running" if rid in arrived else "cancelled" for rid in lost_edits} == lost_edits
    assert "not_running" in lost_edits.values()
    # What the dead worker committed just before the kill is completed work too; only its answer was lost.
    assert 0 <= images - seen.images_completed <= len(load.died["create"]), seen
    assert 0 <= edits - seen.edits_completed <= len(load.died["edit"]), seen
    assert seen.images_charged == images and seen.edits_charged == edits, seen
    assert seen.balance_change == images * style["creditCost"] + edits * edit_price, seen


@pytest.mark.slow(9)
def test_work_the_database_cannot_record_in_time_is_answered_503_and_refunded_once_it_is_back(tmp_path):
    """The database stopped for longer than ``outage_patience`` (1 s here) while a create, an async
    create and an edit are charged and running. Figures: the create and the edit are answered 503
    with Retry-After, as is a request sent meanwhile; once the database is back nothing holds a slot
    or is PENDING, the images are FAILED naming the outage (settled by the worker that gave them up,
    not by a lease running out), the edit is not counted, and the balance is what it was before."""
    with PostgresServer() as cluster:  # its own: stopping the session's would cut other tests' connections
        url = cluster.new_database()
        with EmbeddedSandbox(tmp_path / "data", latency=2, base_size=256, database_url=url,
                             outage_patience=1) as box:
            user_id, key, style, source, _ = new_account(box)
            before = (balance(box, key), call(box, key, "GET", "/api/users/me/usage").json()["editCount"])
            create = {"prompt": "held", "styleId": style["styleId"]}
            queued = call(box, key, "POST", "/api/images/create", json={**create, "isAsync": True}).json()["images"]
            with ThreadPoolExecutor(2) as pool, psycopg.connect(url, autocommit=True) as db:
                answers = [pool.submit(call, box, key, "POST", "/api/images/create", json=create),
                           pool.submit(call, box, key, "POST", f"/api/images/{source}/retry",
                                       headers={"X-Request-Id": "held-edit"})]
                wait_until(lambda: db.execute("SELECT count(charge_id) FROM running_slots WHERE user_id = %s",
                                              (user_id,)).fetchone() == (3,), timeout=60, what="three charged operations")
                cluster.halt()
                try:
                    refused = [answer.result(120) for answer in answers]
                    meanwhile = call(box, key, "GET", "/api/users/me")
                finally:
                    cluster.resume()
            settled_in = wait_settled(url, user_id)
            after = (balance(box, key), call(box, key, "GET", "/api/users/me/usage").json()["editCount"])
            queued_after = call(box, key, "GET", f"/api/images/{queued[0]['imageId']}").json()
            cancel = call(box, key, "POST", "/api/images/cancelEdit/held-edit").json()
            with psycopg.connect(url) as db:
                failed = db.execute("SELECT error FROM images WHERE owner_id = %s AND status = 'FAILED'",
                                    (user_id,)).fetchall()
            print(f"\nanswers {[answer.status_code for answer in refused]}, meanwhile {meanwhile.status_code}; "
                  f"settled {settled_in:.1f} s after the database was back; balance {before[0]} -> {after[0]}, "
                  f"edits counted {before[1]} -> {after[1]}; failed images {len(failed)}")

    for answer in [*refused, meanwhile]:
        assert_error(answer, 503, "service_unavailable")
        assert int(answer.headers["Retry-After"]) >= 1
    assert settled_in < float("inf")
    assert queued_after["generationStatus"] == "FAILED" and queued_after["generationError"] == OUTAGE_REFUND
    assert failed == [(OUTAGE_REFUND,), (OUTAGE_REFUND,)]  # the async create's image and the refused create's
    assert cancel == "not_running"
    assert after == before  # nothing charged, no edit counted


def test_a_frozen_database_is_an_outage_answered_in_seconds_not_a_hang(tmp_path):
    """Every process of the sandbox's PostgreSQL stopped (SIGSTOP: a frozen VM, a failover): its
    kernel still acknowledges every packet, so only the sandbox's own bound ends the wait. A request
    meanwhile is answered 503 with Retry-After within seconds, and once the server runs again the
    sandbox answers by itself. Figures: seconds to the 503, seconds from the thaw to a 200."""
    with PostgresServer() as cluster:  # its own: freezing the session's would stall other tests
        url = cluster.new_database()
        with EmbeddedSandbox(tmp_path / "data", database_url=url, db_wait=2) as box:
            assert call(box, box.api_key, "GET", "/api/users/me").status_code == 200
            frozen = cluster.freeze()
            try:
                sent = time.monotonic()
                refused = call(box, box.api_key, "GET", "/api/users/me")
                answered = time.monotonic() - sent
            finally:
                cluster.thaw(frozen)
            thawed = time.monotonic()
            wait_until(lambda: call(box, box.api_key, "GET", "/api/users/me").status_code == 200, timeout=60,
                       what="an answer after the thaw")
            back = time.monotonic() - thawed
    print(f"\nfrozen database: 503 after {answered:.1f} s; 200 again {back:.1f} s after the thaw")
    assert_error(refused, 503, "service_unavailable")
    assert int(refused.headers["Retry-After"]) >= 1
    assert answered < 30, answered  # the bound (2 s) and a reconnect's own (5 s), not the 120-s client timeout
