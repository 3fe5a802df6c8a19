"""POST /api/images/create: the three modes, counts, ratios, async, headers, and every refusal."""

from __future__ import annotations

import base64
import io
import time

import httpx
import numpy as np
import pytest
from PIL import Image

from imagekit.sandbox.domain.generation import resolution
from tests.helpers import SIZE, TLS, assert_error, on_both_databases, wait_until
from tests.utils.users import make_user

pytestmark = on_both_databases


def style_id(api: httpx.Client) -> int:
    return api.get("/api/users/me/styles").json()[0]["styleId"]


def create(api: httpx.Client, **body) -> httpx.Response:
    body.setdefault("prompt", "a lighthouse on a cliff at dusk")
    if not {"image", "styleId", "collectionId"} & set(body):
        body["styleId"] = style_id(api)
    return api.post("/api/images/create", json=body)


def pixels(api: httpx.Client, image_id: int) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(api.get(f"/api/images/{image_id}/binary").content)).convert("RGB"))


@pytest.mark.parametrize("count", [1, 2, 4])
def test_style_mode_makes_count_images_and_charges_for_each(api, count):
    before = api.get("/api/users/me/usage").json()["currentCredit"]
    style = api.get("/api/users/me/styles").json()[0]
    response = create(api, styleId=style["styleId"], count=count)
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["images"]) == count
    charged = style["creditCost"] * count
    assert int(response.headers["X-Credits-Consumed"]) == charged
    after = body["defaultCredit"] + body["dailyCredit"] + body["monthlyCredit"]
    assert after == before - charged == int(response.headers["X-Remaining-Credits"])
    for image in body["images"]:
        assert image["generationStatus"] == "COMPLETED" and image["resolution"] == f"{SIZE}x{SIZE}"
        assert image["mimeType"] == "image/jpeg"
        assert Image.open(io.BytesIO(base64.b64decode(image["base64"]))).size == (SIZE, SIZE)
        assert image["GenerationInfo"]["originalPrompt"] == "a lighthouse on a cliff at dusk"
    assert len({i["GenerationInfo"]["groupId"] for i in body["images"]}) == 1
    assert len({i["GenerationInfo"]["variationId"] for i in body["images"]}) == count


@pytest.mark.parametrize("ratio,size", [("square", (1024, 1024)), ("1:1", (1024, 1024)), ("vertical", (768, 1024)),
                                        ("3:4", (768, 1024)), ("horizontal", (1024, 768)), ("4:3", (1024, 768)),
                                        ("9:16", (576, 1024)), ("16:9", (1024, 576))])
def test_ratios_map_to_resolutions(api, ratio, size):
    """The service's sizes (long side 1024), and the same proportions at the session sandbox's size."""
    assert resolution(ratio, 1024) == size
    scaled = (size[0] * SIZE // 1024, size[1] * SIZE // 1024)
    image = create(api, ratio=ratio).json()["images"][0]
    assert image["resolution"] == f"{scaled[0]}x{scaled[1]}"
    assert Image.open(io.BytesIO(api.get(f"/api/images/{image['imageId']}/binary").content)).size == scaled


def test_same_seed_same_pixels_and_styles_differ(api):
    styles = [s["styleId"] for s in api.get("/api/users/me/styles").json()]
    first = create(api, styleId=styles[0], seed=42, ratio="16:9").json()["images"][0]["imageId"]
    again = create(api, styleId=styles[0], seed=42, ratio="16:9").json()["images"][0]["imageId"]
    other = create(api, styleId=styles[1], seed=42, ratio="16:9").json()["images"][0]["imageId"]
    assert np.array_equal(pixels(api, first), pixels(api, again))
    difference = np.abs(pixels(api, first).astype(int) - pixels(api, other).astype(int)).mean()
    assert difference > 20


def test_reference_mode_derives_from_own_image(api):
    source = create(api, seed=1).json()["images"][0]["imageId"]
    unrelated = create(api, seed=99, prompt="a red cat in a green field").json()["images"][0]["imageId"]
    made = create(api, image=f"/api/images/{source}/binary", seed=5).json()["images"][0]
    assert made["generationStatus"] == "COMPLETED"
    grey = [np.asarray(Image.fromarray(pixels(api, i)).convert("L").resize((64, 64)), float).ravel()
            for i in (source, made["imageId"], unrelated)]
    assert np.corrcoef(grey[0], grey[1])[0, 1] > 0.6
    assert np.corrcoef(grey[0], grey[1])[0, 1] > np.corrcoef(grey[2], grey[1])[0, 1]


def test_reference_as_data_url(api):
    picture = Image.new("RGB", (300, 200), (200, 30, 30))
    buffer = io.BytesIO()
    picture.save(buffer, "PNG")
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    made = create(api, image=url).json()["images"][0]
    assert made["generationStatus"] == "COMPLETED"
    assert pixels(api, made["imageId"])[..., 0].mean() > pixels(api, made["imageId"])[..., 2].mean()


def test_collection_mode(api):
    me_collections = api.get("/api/users/me/collectionCount").json()
    assert me_collections == 1
    response = create(api, collectionId=1)
    assert response.status_code == 200 and response.json()["images"][0]["GenerationInfo"]["super"] == "collection"


def test_premium_collection_needs_premium_plan(sandbox, client_for):
    assert_error(create(client_for("standard"), collectionId=3), 403, "premium_required")
    assert create(client_for("pro"), collectionId=3).status_code == 200


def test_async_returns_pending_then_completes(api):
    response = create(api, isAsync=True, count=2)
    images = response.json()["images"]
    assert {i["generationStatus"] for i in images} <= {"PENDING", "COMPLETED"}
    for image in images:
        deadline = time.monotonic() + 30
        while (meta := api.get(f"/api/images/{image['imageId']}").json())["generationStatus"] == "PENDING":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert meta["generationStatus"] == "COMPLETED"


def test_a_generation_seen_done_no_longer_holds_its_slot(sandbox, client_for):
    # The last image's settling gives the slot back in its own transaction: once a poll sees the
    # request done, the next create is never refused for the plan's limit (a free plan: one at a time).
    api = client_for("free")
    user_id = api.get("/api/users/me").json()["userId"]
    for _ in range(6):
        images = create(api, isAsync=True, count=2).json()["images"]
        for image in images:
            wait_until(lambda image=image: api.get(f"/api/images/{image['imageId']}").json()["generationStatus"]
                       != "PENDING", what=f"image {image['imageId']} done")
        assert sandbox.sandbox.gate.running(user_id) == 0


def test_failed_generation_is_refunded(own_sandbox):
    _, key = make_user(own_sandbox)
    with httpx.Client(base_url=own_sandbox.url, headers={"X-Api-Key": key}, verify=TLS) as api:
        before = api.get("/api/users/me/usage").json()["currentCredit"]
        httpx.post(f"{own_sandbox.url}/sandbox/faults", json={"fail_generation_rate": 1.0}, verify=TLS, timeout=120)
        response = create(api, count=2)
        image = response.json()["images"][0]
        assert image["generationStatus"] == "FAILED" and image["generationError"]
        assert response.headers["X-Credits-Consumed"] == "0"
        assert api.get("/api/users/me/usage").json()["currentCredit"] == before
        assert_error(api.get(f"/api/images/{image['imageId']}/binary"), 409, "image_not_ready")
        assert list((own_sandbox.data_dir / "images").glob(f"{image['imageId']}.*")) == []


def test_platform_and_api_type_headers(api, client_for):
    assert create(api).json()["images"][0]["etc"].count('"platform": "api"') == 1
    made = api.post("/api/images/create", headers={"X-Platform": "figma"},
                    json={"prompt": "x", "styleId": style_id(api)}).json()["images"][0]
    assert '"platform": "figma"' in made["etc"]
    assert_error(api.post("/api/images/create", headers={"X-Platform": "desktop"},
                          json={"prompt": "x", "styleId": style_id(api)}), 400, "invalid_platform")
    assert_error(api.post("/api/images/create", headers={"X-Api-Type": "turbo"},
                          json={"prompt": "x", "styleId": style_id(api)}), 400, "invalid_api_type")
    assert_error(api.post("/api/images/create", headers={"X-Api-Type": "enterprise"},
                          json={"prompt": "x", "styleId": style_id(api)}), 403, "enterprise_only")
    enterprise = client_for("enterprise")
    made = enterprise.post("/api/images/create", headers={"X-Api-Type": "enterprise"},
                           json={"prompt": "x", "styleId": style_id(enterprise)}).json()["images"][0]
    assert '"modelId": 2' in made["etc"]


BAD_BODIES = [
    ({"prompt": "x" * 1201}, 400, "invalid_request"),
    ({"prompt": "x", "count": 3}, 400, "invalid_request"),
    ({"prompt": "x", "count": "2"}, 400, "invalid_request"),
    ({"prompt": "x", "ratio": "2:1"}, 400, "invalid_request"),
    ({"prompt": "x", "isAsync": "yes"}, 400, "invalid_request"),
    ({"prompt": 5}, 400, "invalid_request"),
    ({}, 400, "invalid_request"),
    ({"prompt": "   "}, 400, "invalid_request"),
    ({"prompt": "x", "styleId": 10**9}, 404, "style_not_found"),
    ({"prompt": "x", "collectionId": 10**9}, 404, "collection_not_found"),
    ({"prompt": "x", "styleId": -1}, 400, "invalid_request"),
    ({"prompt": "x", "image": "/api/images/999999999/binary"}, 404, "image_not_found"),
    ({"prompt": "x", "image": "http://example.com/cat.png"}, 400, "unsupported_image_source"),
    ({"prompt": "x", "image": "file:///etc/passwd"}, 400, "unsupported_image_source"),
    ({"prompt": "x", "image": "data:image/png;base64,not-base64!"}, 400, "invalid_image"),
    ({"prompt": "x", "image": "data:image/png;base64,aGVsbG8="}, 415, "unsupported_media_type"),
    ({"prompt": "x", "image": "data:text/html;base64,aGVsbG8="}, 400, "unsupported_image_source"),
    ({"prompt": "x", "seed": 2**40}, 400, "invalid_request"),
]


@pytest.mark.parametrize("body,status,name", BAD_BODIES)
def test_bad_input_is_refused_without_charge_or_rows(api, body, status, name):
    before = api.get("/api/users/me/usage").json()["currentCredit"]
    if body.get("prompt") is not None and not {"image", "styleId", "collectionId"} & set(body):
        body = {**body, "styleId": style_id(api)}
    assert_error(api.post("/api/images/create", json=body), status, name)
    assert api.get("/api/users/me/usage").json()["currentCredit"] == before


@pytest.mark.parametrize("fields", [{}, {"styleId": 1, "collectionId": 1},
                                    {"styleId": 1, "image": "/api/images/1/binary"},
                                    {"styleId": 1, "collectionId": 1, "image": "/api/images/1/binary"}])
def test_exactly_one_mode(api, fields):
    assert_error(api.post("/api/images/create", json={"prompt": "x", **fields}), 400, "invalid_generation_mode")


def test_malformed_json_and_wrong_content(api):
    assert_error(api.post("/api/images/create", content=b"{not json",
                          headers={"content-type": "application/json"}), 400, "malformed_json")
    assert_error(api.post("/api/images/create", json=[1, 2]), 400, "invalid_request")


def test_someone_elses_image_answers_like_an_unknown_one(sandbox, api):
    _, other_key = make_user(sandbox)
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Key": other_key}, verify=TLS) as other:
        theirs = create(other).json()["images"][0]["imageId"]
    unknown = assert_error(api.get("/api/images/999999999"), 404, "image_not_found")
    foreign = assert_error(api.get(f"/api/images/{theirs}"), 404, "image_not_found")
    assert foreign["message"].replace(str(theirs), "N") == unknown["message"].replace("999999999", "N")
    assert_error(api.get(f"/api/images/{theirs}/binary"), 404, "image_not_found")
    assert_error(create(api, image=f"/api/images/{theirs}/binary"), 404, "image_not_found")


def test_style_not_allowed_rules(sandbox, client_for):
    enterprise = client_for("enterprise")
    public_style = 1
    assert create(enterprise, styleId=public_style).status_code == 200
    httpx.patch(f"{sandbox.url}/sandbox/users/{enterprise.user_id}/enterprise", json={"canUseOwnOnly": True}, verify=TLS)
    assert_error(create(enterprise, styleId=public_style), 403, "style_not_allowed")
    assert create(enterprise, styleId=style_id(enterprise)).status_code == 200


def test_metadata_shows_the_group_id_a_generation_was_created_with(api):
    image_id = create(api, groupId="row-7.1", count=2).json()["images"][1]["imageId"]
    assert api.get(f"/api/images/{image_id}").json()["GenerationInfo"] == {"blurReason": "", "groupId": "row-7.1"}
    edited = api.post(f"/api/images/{image_id}/upsize", json={"scaleSize": "2x"}).json()["image"]["imageId"]
    assert "groupId" not in api.get(f"/api/images/{edited}").json()["GenerationInfo"]  # generations only


def test_spec_metadata_leaves_the_group_id_out(tmp_path, client_for, sandbox_on):
    with sandbox_on(tmp_path / "spec", base_size=256, spec_exact=True) as box:
        api = client_for("standard", box)
        image_id = create(api, groupId="row-7.1").json()["images"][0]["imageId"]
        assert api.get(f"/api/images/{image_id}").json()["GenerationInfo"] == {"blurReason": ""}
