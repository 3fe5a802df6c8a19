"""Inputs that used to be answered wrongly: each is now a 4xx in the error shape, and uncharged."""

from __future__ import annotations

import base64
import io

import httpx
import pytest
from PIL import Image

from tests.helpers import TLS, assert_error
from tests.utils.users import make_user


def balance_and_usage(api: httpx.Client) -> tuple[int, dict]:
    me = api.get("/api/users/me").json()
    return me["defaultCredit"] + me["dailyCredit"] + me["monthlyCredit"], api.get("/api/users/me/usage").json()


def style_of(api: httpx.Client) -> int:
    return api.get("/api/users/me/styles").json()[0]["styleId"]


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/sandbox/users/{user}/keys", {"expiresInSeconds": 1e12}),
    ("POST", "/sandbox/sessions", {"userId": 2**63}),
    ("PATCH", "/sandbox/users/{user}/enterprise", {"maxEditNumber": 2**63}),
    ("PATCH", "/sandbox/users/{user}/enterprise", {"specialLimits": {"fill": 2**63}}),
    ("POST", "/sandbox/faults", {"seed": 2**70}),
    ("POST", "/sandbox/users", {"email": "n@x.io", "name": "n" * 1000}),
])
def test_control_numbers_beyond_the_database_are_400(sandbox, method, path, body):
    user_id, _ = make_user(sandbox, "enterprise")
    response = httpx.request(method, sandbox.url + path.format(user=user_id), json=body, verify=TLS, timeout=120)
    assert_error(response, 400, "invalid_request")


def test_the_clock_cannot_be_pushed_past_the_calendar(own_sandbox):
    for _ in range(5):
        httpx.post(f"{own_sandbox.url}/sandbox/clock/advance", json={"seconds": 10 * 365 * 86400}, verify=TLS, timeout=120).raise_for_status()
    pushed = httpx.post(f"{own_sandbox.url}/sandbox/clock/advance", json={"seconds": 10 * 365 * 86400}, verify=TLS, timeout=120)
    assert_error(pushed, 400, "invalid_request")
    assert httpx.get(f"{own_sandbox.url}/sandbox/clock", verify=TLS, timeout=120).json()["offsetSeconds"] == 50 * 365 * 86400


def strip_png(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("L", (width, height), 128).save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def test_a_one_pixel_high_strip_is_refused_before_the_engine(api):
    before = balance_and_usage(api)
    strip = strip_png(25_000_000, 1)
    assert_error(api.post("/api/images/create", json={"prompt": "a strip", "image": strip}), 413, "image_too_large")
    assert_error(api.post("/api/images/imageToPrompt", json={"image": strip}), 413, "image_too_large")
    assert balance_and_usage(api) == before


@pytest.mark.parametrize("text", ["\u0000", "a\u0000b", "bell\u0007", "\u007f"])
def test_control_characters_in_prompts_are_refused(api, text):
    before = balance_and_usage(api)
    assert_error(api.post("/api/images/textToPrompt", json={"text": text}), 400, "invalid_request")
    assert_error(api.post("/api/images/create", json={"prompt": text, "styleId": style_of(api)}), 400, "invalid_request")
    assert balance_and_usage(api) == before


def test_tabs_and_newlines_stay_welcome(api):
    assert api.post("/api/images/textToPrompt", json={"text": "a lighthouse\n\tat dusk"}).status_code == 200


@pytest.mark.parametrize("count", [True, 1.0, "1", 2.0])
def test_count_is_a_json_integer(api, count):
    before = balance_and_usage(api)
    made = api.post("/api/images/create", json={"prompt": "a kite", "styleId": style_of(api), "count": count})
    assert_error(made, 400, "invalid_request")
    assert balance_and_usage(api) == before


@pytest.mark.parametrize("request_id", ["café", "этот", "id-٣"])
def test_request_ids_are_ascii(api, request_id):
    before = balance_and_usage(api)
    image_id = api.post("/api/images/create", json={"prompt": "a kite", "styleId": style_of(api)}).json()["images"][0]["imageId"]
    before = balance_and_usage(api)
    refused = api.post(f"/api/images/{image_id}/retry", headers={"X-Request-Id": request_id.encode()})
    assert_error(refused, 400, "invalid_request_id")
    assert_error(api.post(f"/api/images/cancelEdit/{request_id}"), 400, "invalid_request")
    assert balance_and_usage(api) == before


def test_a_405_names_the_allowed_methods(api):
    response = api.delete("/api/users/me")
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["Allow"] == "GET"
    assert api.put("/api/images/create").headers["Allow"] == "POST"


def test_download_log_shows_the_viewer_only_their_own_downloads(sandbox, client_for):
    first, second = client_for(), client_for()
    public = first.get("/api/users/me/styles").json()[0]["thumbLink"]  # own thumbnail: only first may read it
    mine = int(public.split("/")[3])
    catalogue = 1  # an image of the public catalogue, readable by both
    for who in (first, second, second):
        assert who.get(f"/api/images/{catalogue}/binary").status_code == 200
    first.get(f"/api/images/{mine}/binary").raise_for_status()
    assert {entry["userId"] for entry in first.get(f"/api/images/{catalogue}").json()["DownloadLog"]} == {first.user_id}
    seen = second.get(f"/api/images/{catalogue}").json()["DownloadLog"]
    assert len(seen) == 2 and {entry["userId"] for entry in seen} == {second.user_id}
    assert [entry["userId"] for entry in first.get(f"/api/images/{mine}").json()["DownloadLog"]] == [first.user_id]
