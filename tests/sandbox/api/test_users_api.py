"""GET /api/users/me, usage, styles, collectionCount, and authentication."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.helpers import TLS, assert_error
from tests.utils.users import make_user

USER_FIELDS = {
    "userId": int, "email": str, "name": str, "occupation": str, "business": str, "notifyAgree": bool,
    "creditNotifyAgree": bool, "tutorialFinished": bool, "profileImage": str, "snsId": str, "provider": str,
    "role": str, "defaultCredit": int, "dailyCredit": int, "monthlyCredit": int, "customerKey": str,
    "createdAt": str, "nextPlanAt": str, "planStartedAt": str, "planId": int, "cardNumber": str,
    "cardCompany": str, "Plan": dict, "cardRegistered": bool, "usePartner": bool, "maxCredit": int,
}
PLAN_FIELDS = {
    "planId": int, "grade": str, "minusCreditAllowed": int, "maxStyleNumber": int, "simultaneousLimit": int,
    "maxMultiSelect": int, "maxEditNumber": int, "maxPromptNumber": int, "period": str,
    "oneTimePayment": bool, "defaultCredit": int, "dailyCredit": int, "monthlyCredit": int,
    "CreditCostInfo": list, "priceObj": dict, "titleName": str,
}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def check_fields(obj: dict, fields: dict) -> None:
    for name, kind in fields.items():
        assert isinstance(obj[name], kind), (name, obj.get(name))


def test_me_has_every_user_and_plan_field(api):
    me = api.get("/api/users/me").json()
    check_fields(me, USER_FIELDS)
    check_fields(me["Plan"], PLAN_FIELDS)
    assert me["role"] == "normal" and me["Plan"]["grade"] == "standard" and me["Plan"]["period"] in ("month", "day")
    assert "billingRetryDate" in me and me["billingRetryDate"] is None and "nextPlanId" in me
    assert re.fullmatch(r"[0-9a-f-]{36}", me["customerKey"])
    assert all(ISO.match(me[k]) for k in ("createdAt", "nextPlanAt", "planStartedAt"))
    assert re.fullmatch(r"[A-Z]{3}", me["Plan"]["priceObj"]["currency"])
    cost = me["Plan"]["CreditCostInfo"][0]
    assert set(cost) >= {"creditCostInfoId", "planId", "upgradePlanId", "type", "credit", "watermarked",
                         "needUpgrade", "featured"}
    assert "Enterprise" not in me and "EnterpriseDownload" not in me


def test_enterprise_user_shows_enterprise_and_downloads(sandbox, client_for):
    me = client_for("enterprise").get("/api/users/me").json()
    enterprise = me["Enterprise"]
    assert enterprise["postpaid"] is True and enterprise["editCountPeriod"] in ("day", "month", "plan")
    assert enterprise["paymentPeriod"] in ("monthly", "yearly", "bill")
    assert re.fullmatch(r"[^/]+/[^:]+:.+", enterprise["modelUrl"])
    assert enterprise["canUseOwnOnly"] is False and enterprise["hasSpecialLimits"] is False
    assert [m["name"] for m in enterprise["Models"]] == ["replicate"]
    assert {d["scaleSize"] for d in me["EnterpriseDownload"]} == {"1x", "2x", "4x", "8x"}


def test_usage_counts_against_the_plan(api):
    usage = api.get("/api/users/me/usage").json()
    me = api.get("/api/users/me").json()
    assert usage["currentCredit"] == me["defaultCredit"] + me["dailyCredit"] + me["monthlyCredit"]
    assert usage["maxEditCount"] == me["Plan"]["maxEditNumber"] and usage["editCount"] == 0
    assert usage["maxTtpCount"] == me["Plan"]["maxPromptNumber"] and usage["ttpCount"] == 0
    assert usage["maxCredit"] == me["maxCredit"] and "postpaidUsageCount" not in usage


def test_styles_are_the_callers_own_with_thumbnails(api):
    styles = api.get("/api/users/me/styles").json()
    assert len(styles) == 2
    for style in styles:
        assert re.fullmatch(r"/api/images/\d+/binary", style["thumbLink"])
        thumb = api.get(style["thumbLink"])
        assert thumb.status_code == 200 and thumb.content.startswith(b"\x89PNG")
        assert isinstance(style["creditCost"], int) and style["apiEnabled"] is True


def test_collection_count_is_a_bare_number(api):
    response = api.get("/api/users/me/collectionCount")
    assert response.json() == 1 and response.text.strip() == "1"


@pytest.mark.parametrize("path", ["/api/users/me", "/api/users/me/usage", "/api/users/me/styles",
                                  "/api/users/me/collectionCount", "/api/images/1"])
def test_missing_key_is_not_logged_in(sandbox, path):
    assert_error(httpx.get(sandbox.url + path, verify=TLS, timeout=120), 403, "not_logged_in")


@pytest.mark.parametrize("key", ["nonsense", "iks_0123456789ab_" + "x" * 32, ""])
def test_wrong_key(sandbox, key):
    response = httpx.get(sandbox.url + "/api/users/me", headers={"X-Api-Key": key}, verify=TLS, timeout=120)
    assert_error(response, 403 if key == "" else 401, "not_logged_in" if key == "" else "wrong_api_key")


def test_tampered_key_is_wrong(sandbox):
    _, key = make_user(sandbox)
    response = httpx.get(sandbox.url + "/api/users/me", headers={"X-Api-Key": key[:-1] + ("A" if key[-1] != "A" else "B")}, verify=TLS, timeout=120)
    assert_error(response, 401, "wrong_api_key")


def test_expired_key(own_sandbox):
    user_id, _ = make_user(own_sandbox)
    key = httpx.post(f"{own_sandbox.url}/sandbox/users/{user_id}/keys", json={"expiresInSeconds": 60}, verify=TLS, timeout=120).json()["apiKey"]
    url = own_sandbox.url + "/api/users/me"
    assert httpx.get(url, headers={"X-Api-Key": key}, verify=TLS, timeout=120).status_code == 200
    httpx.post(f"{own_sandbox.url}/sandbox/clock/advance", json={"seconds": 61}, verify=TLS, timeout=120)
    assert_error(httpx.get(url, headers={"X-Api-Key": key}, verify=TLS, timeout=120), 401, "api_key_expired")


def test_session_cookie_works_on_me_only(sandbox):
    user_id, _ = make_user(sandbox)
    cookie = httpx.post(f"{sandbox.url}/sandbox/sessions", json={"userId": user_id}, verify=TLS, timeout=120).json()["cookie"]
    with httpx.Client(base_url=sandbox.url, cookies={"connect.sid": cookie}, verify=TLS) as browser:
        assert browser.get("/api/users/me").json()["userId"] == user_id
        assert_error(browser.get("/api/users/me/usage"), 403, "not_logged_in")
    forged = cookie[:-2] + "xx"
    assert_error(httpx.get(sandbox.url + "/api/users/me", cookies={"connect.sid": forged}, verify=TLS, timeout=120), 403, "not_logged_in")


def test_keys_are_stored_hashed(sandbox):
    import sqlite3

    _, key = make_user(sandbox)
    with sqlite3.connect(sandbox.data_dir / "sandbox.db") as db:
        stored = [row[0] for row in db.execute("select key_hash from api_keys")]
        dump = "\n".join(db.iterdump())
    assert key not in dump and all(len(h) == 64 for h in stored)
