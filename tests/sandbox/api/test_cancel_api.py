"""cancelEdit: before completion nothing is charged, counted or kept; after completion nothing happens."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.helpers import TLS, assert_error, on_both_databases, wait_for_edit, wait_until
from tests.utils.users import make_user

pytestmark = on_both_databases


@pytest.fixture(scope="module")
def slow(tmp_path_factory, sandbox_on):
    with sandbox_on(tmp_path_factory.mktemp("slow"), latency=0.6, base_size=256) as box:
        yield box


def client(box, plan="pro") -> httpx.Client:
    """A raw client for a fresh user (``user_id`` attribute)."""
    user_id, key = make_user(box, plan)
    api = httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=60, verify=TLS)
    api.user_id = user_id
    return api


def make_image(api) -> int:
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    return api.post("/api/images/create", json={"prompt": "a kite", "styleId": style}).json()["images"][0]["imageId"]


def charges_for(box, request_id: str) -> int:
    """How many charges the sandbox ever made for an edit request id."""
    from sqlalchemy import func, select

    from imagekit.sandbox.store.tables import Charge

    with box.sandbox.db.read() as session:
        return session.scalar(select(func.count()).select_from(Charge).where(Charge.request_id == request_id))


def files(box) -> set[str]:
    return {p.name for p in (box.data_dir / "images").iterdir()}


def test_cancel_during_an_edit_leaves_nothing(slow):
    with client(slow) as api:
        source = make_image(api)
        usage, before_files = api.get("/api/users/me/usage").json(), files(slow)
        result = {}
        worker = threading.Thread(target=lambda: result.setdefault(
            "r", api.post(f"/api/images/{source}/removeBg", headers={"X-Request-Id": "slow-1"})))
        worker.start()
        wait_for_edit(slow, api.user_id, "slow-1", {"running"})
        assert api.post("/api/images/cancelEdit/slow-1").json() == "cancelled"
        worker.join()
        assert_error(result["r"], 409, "edit_cancelled")
        assert api.post("/api/images/cancelEdit/slow-1").json() == "cancelled"  # still cancelled, not "done"
        assert api.get("/api/users/me/usage").json() == usage
        assert files(slow) == before_files
        assert api.get(f"/api/images/{source}").json()["Upscaled"] == []


def test_the_cancel_answers_once_the_refund_is_made(slow):
    with client(slow) as api, client(slow) as same_user:
        same_user.headers["X-Api-Key"] = api.headers["X-Api-Key"]  # a second connection, as a notebook's
        source = make_image(api)
        usage = api.get("/api/users/me/usage").json()
        worker = threading.Thread(target=lambda: api.post(f"/api/images/{source}/enhance",
                                                          json={"scaleSize": "2x"}, headers={"X-Request-Id": "slow-2"}))
        worker.start()
        wait_for_edit(slow, api.user_id, "slow-2", {"running"})
        assert same_user.post("/api/images/cancelEdit/slow-2").json() == "cancelled"
        assert same_user.get("/api/users/me/usage").json() == usage  # read before the edit's own answer
        worker.join()


def test_cancel_after_completion_changes_nothing(slow):
    with client(slow) as api:
        source = make_image(api)
        done = api.post(f"/api/images/{source}/upsize", headers={"X-Request-Id": "fast-1"})
        assert done.status_code == 200
        usage = api.get("/api/users/me/usage").json()
        assert api.post("/api/images/cancelEdit/fast-1").json() == "not_running"
        assert api.get("/api/users/me/usage").json() == usage
        assert api.get(f"/api/images/{done.json()['image']['imageId']}/binary").status_code == 200


def test_cancel_that_arrives_first_cancels_the_edit(slow):
    with client(slow) as api:
        source = make_image(api)
        usage = api.get("/api/users/me/usage").json()
        assert api.post("/api/images/cancelEdit/early-1").json() == "cancelled"
        assert_error(api.post(f"/api/images/{source}/retry", headers={"X-Request-Id": "early-1"}), 409, "edit_cancelled")
        assert api.post("/api/images/cancelEdit/early-1").json() == "cancelled"
        assert api.get("/api/users/me/usage").json() == usage
        # Refused before any charge: not charged and refunded, which a balance read between would see.
        assert charges_for(slow, "early-1") == 0


def test_cancel_is_per_user(slow):
    with client(slow) as api, client(slow) as stranger:
        source = make_image(api)
        result = {}
        worker = threading.Thread(target=lambda: result.setdefault(
            "r", api.post(f"/api/images/{source}/upsize", headers={"X-Request-Id": "mine-1"})))
        worker.start()
        wait_for_edit(slow, api.user_id, "mine-1", {"running"})
        stranger.post("/api/images/cancelEdit/mine-1")
        worker.join()
        assert result["r"].status_code == 200


def test_cancel_reaches_inside_a_long_enhance(tmp_path, sandbox_on):
    # 8x of 512 px: a 4096-px result, long enough that a cancel lands well inside the engine
    with sandbox_on(tmp_path / "box", base_size=512) as box, client(box) as api:
        source = make_image(api)
        result = {}
        started = time.monotonic()
        worker = threading.Thread(target=lambda: result.setdefault(
            "r", api.post(f"/api/images/{source}/enhance", json={"scaleSize": "8x"}, headers={"X-Request-Id": "big-1"})))
        worker.start()
        # Charged: the engine is starting, so only its own checks can stop it before the end.
        wait_until(lambda: charges_for(box, "big-1") == 1, what="the 8x enhance charged")
        api.post("/api/images/cancelEdit/big-1")
        worker.join()
        assert_error(result["r"], 409, "edit_cancelled")
        uncancelled_started = time.monotonic()
        assert api.post(f"/api/images/{source}/enhance", json={"scaleSize": "8x"}).status_code == 200
        full = time.monotonic() - uncancelled_started
        assert time.monotonic() - started - full < full  # the cancelled run stopped well before the end


@pytest.mark.slow(10)
def test_random_mix_of_edits_and_cancels_balances(slow):
    rng = random.Random(7)
    with client(slow, "enterprise") as api:
        httpx.post(f"{slow.url}/sandbox/users/{api.get('/api/users/me').json()['userId']}/credits",
                   json={"defaultCredit": 5000}, verify=TLS, timeout=120)
        source = make_image(api)
        before = api.get("/api/users/me/usage").json()
        ops = [rng.choice(["upsize", "removeBg", "retry", "vectorize"]) for _ in range(100)]

        def one(i):
            response = api.post(f"/api/images/{source}/{ops[i]}", headers={"X-Request-Id": f"mix-{i}"})
            return response

        def canceller():
            for i in rng.sample(range(100), 50):
                time.sleep(rng.random() * 0.05)
                api.post(f"/api/images/cancelEdit/mix-{i}")

        with ThreadPoolExecutor(9) as pool:
            cancelling = pool.submit(canceller)
            responses = list(pool.map(one, range(100)))
            cancelling.result()
        done = [r for r in responses if r.status_code == 200]
        statuses = {r.status_code for r in responses}
        assert statuses <= {200, 409, 429} and done and 409 in statuses
        after = api.get("/api/users/me/usage").json()
        charged = sum(int(r.headers["X-Credits-Consumed"]) for r in done)
        assert before["currentCredit"] - after["currentCredit"] == charged
        assert after["editCount"] - before["editCount"] == len(done)
