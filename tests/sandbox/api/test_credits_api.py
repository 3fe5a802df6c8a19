"""Credits: prices from the plan, 402 refusals, the allowed floor, grants over the sandbox clock,
maxCredit, postpaid enterprise accounts, and simultaneousLimit under concurrent load."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.helpers import TLS, assert_error, on_both_databases
from tests.utils.users import make_user

pytestmark = on_both_databases


def balance(api) -> int:
    return api.get("/api/users/me/usage").json()["currentCredit"]


def set_credits(box, user_id, **buckets) -> None:
    httpx.post(f"{box.url}/sandbox/users/{user_id}/credits", json=buckets, verify=TLS, timeout=120).raise_for_status()


def create(api, count=1, **extra) -> httpx.Response:
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    return api.post("/api/images/create", json={"prompt": "a quiet harbour", "styleId": style, "count": count, **extra})


def test_price_is_the_plan_row_for_reference_mode(client_for):
    api = client_for("standard")
    reference_price = next(c["credit"] for c in api.get("/api/users/me").json()["Plan"]["CreditCostInfo"]
                           if c["type"] == "reference")
    source = create(api).json()["images"][0]["imageId"]
    before = balance(api)
    response = api.post("/api/images/create", json={"prompt": "again", "image": f"/api/images/{source}/binary", "count": 2})
    assert int(response.headers["X-Credits-Consumed"]) == 2 * int(reference_price)
    assert balance(api) == before - 2 * int(reference_price)


def test_not_enough_credit_refuses_before_charging(sandbox, client_for):
    api = client_for("free")
    set_credits(sandbox, api.user_id, defaultCredit=0, dailyCredit=10)
    assert create(api, count=4).status_code == 200
    assert balance(api) == 2
    assert_error(create(api, count=4), 402, "not_enough_credit")
    assert balance(api) == 2


def test_minus_credit_allowed_is_the_floor(sandbox, client_for):
    api = client_for("pro")
    floor = api.get("/api/users/me").json()["Plan"]["minusCreditAllowed"]
    assert floor == 100
    set_credits(sandbox, api.user_id, defaultCredit=-95, monthlyCredit=0)
    assert create(api).status_code == 200
    me = api.get("/api/users/me").json()
    assert me["defaultCredit"] < -95 and me["defaultCredit"] >= -floor
    set_credits(sandbox, api.user_id, defaultCredit=-floor)
    assert_error(create(api), 402, "not_enough_credit")


def test_daily_and_monthly_grants_follow_the_clock(own_sandbox):
    free_id, free_key = make_user(own_sandbox, "free")
    std_id, std_key = make_user(own_sandbox, "standard")
    with httpx.Client(base_url=own_sandbox.url, headers={"X-Api-Key": free_key}, verify=TLS, timeout=120) as free, \
            httpx.Client(base_url=own_sandbox.url, headers={"X-Api-Key": std_key}, verify=TLS, timeout=120) as std:
        create(free, count=4)
        create(std, count=4)
        assert free.get("/api/users/me").json()["dailyCredit"] == 12
        assert std.get("/api/users/me").json()["monthlyCredit"] == 992
        httpx.post(f"{own_sandbox.url}/sandbox/clock/advance", json={"seconds": 86400}, verify=TLS, timeout=120)
        assert free.get("/api/users/me").json()["dailyCredit"] == 20
        assert std.get("/api/users/me").json()["monthlyCredit"] == 992
        httpx.post(f"{own_sandbox.url}/sandbox/clock/advance", json={"seconds": 31 * 86400}, verify=TLS, timeout=120)
        assert std.get("/api/users/me").json()["monthlyCredit"] == 1000


def test_grants_never_exceed_max_credit(own_sandbox):
    user_id, key = make_user(own_sandbox, "free")
    with httpx.Client(base_url=own_sandbox.url, headers={"X-Api-Key": key}, verify=TLS) as api:
        max_credit = api.get("/api/users/me").json()["maxCredit"]
        set_credits(own_sandbox, user_id, defaultCredit=max_credit - 5, dailyCredit=0)
        httpx.post(f"{own_sandbox.url}/sandbox/clock/advance", json={"seconds": 86400}, verify=TLS, timeout=120)
        me = api.get("/api/users/me").json()
        assert me["dailyCredit"] == 5 and balance(api) == max_credit


def test_postpaid_enterprise_goes_past_its_credit(sandbox, client_for):
    api = client_for("enterprise")
    set_credits(sandbox, api.user_id, defaultCredit=0, monthlyCredit=1)
    response = create(api, count=2)
    assert response.status_code == 200
    charged = int(response.headers["X-Credits-Consumed"])
    usage = api.get("/api/users/me/usage").json()
    assert usage["postpaidUsageCount"] == charged - 1 and usage["currentCredit"] == 0


@pytest.fixture
def slow_sandbox(tmp_path, sandbox_on):
    with sandbox_on(tmp_path / "slow", latency=0.2, base_size=256) as box:
        yield box


def test_fifty_concurrent_creates_respect_limit_and_balance(slow_sandbox):
    user_id, key = make_user(slow_sandbox, "standard")
    set_credits(slow_sandbox, user_id, defaultCredit=0, monthlyCredit=21)
    with httpx.Client(base_url=slow_sandbox.url, headers={"X-Api-Key": key}, timeout=60,
                      limits=httpx.Limits(max_connections=60), verify=TLS) as api:
        limit = api.get("/api/users/me").json()["Plan"]["simultaneousLimit"]
        style = api.get("/api/users/me/styles").json()[0]["styleId"]
        before = balance(api)

        def one(_):
            return api.post("/api/images/create", json={"prompt": "rush", "styleId": style})

        with ThreadPoolExecutor(50) as pool:
            responses = list(pool.map(one, range(50)))
        statuses = {r.status_code for r in responses}
        assert statuses <= {200, 402, 429} and 200 in statuses and 429 in statuses
        for r in responses:
            if r.status_code == 429:
                assert_error(r, 429, "simultaneous_limit_exceeded")
                assert r.headers["Retry-After"] == "1"
        charged = sum(int(r.headers["X-Credits-Consumed"]) for r in responses if r.status_code == 200)
        assert balance(api) == before - charged >= 0
        peak = httpx.get(f"{slow_sandbox.url}/sandbox/stats", verify=TLS, timeout=120).json()["peakConcurrency"][str(user_id)]
        assert peak <= limit

        # Retrying the refused ones until the credit runs out never drops below the floor.
        while (r := one(0)).status_code in (200, 429):
            pass
        assert_error(r, 402, "not_enough_credit")
        assert 0 <= balance(api) < 2
