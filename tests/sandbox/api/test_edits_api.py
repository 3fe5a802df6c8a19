"""The eight edits over HTTP: results linked to their source, charges, edit counts, masks, limits."""

from __future__ import annotations

import io

import httpx
import numpy as np
import pytest
from PIL import Image

from tests.helpers import SIZE, TLS, assert_error, on_both_databases

pytestmark = on_both_databases


def make_image(api: httpx.Client, ratio: str = "square", prompt: str = "a red apple on a wooden table") -> int:
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    response = api.post("/api/images/create", json={"prompt": prompt, "styleId": style, "ratio": ratio, "seed": 3})
    return response.json()["images"][0]["imageId"]


def read(api: httpx.Client, image_id: int, **params) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(api.get(f"/api/images/{image_id}/binary", params=params).content)))


def png(mask: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(mask.astype(np.uint8) * 255).save(buffer, "PNG")
    return buffer.getvalue()


def centre_mask(size: int = SIZE, half: int = SIZE // 8) -> np.ndarray:
    mask = np.zeros((size, size), bool)
    mask[size // 2 - half:size // 2 + half, size // 2 - half:size // 2 + half] = True
    return mask


SQUARE, DOUBLE = f"{SIZE}x{SIZE}", f"{2 * SIZE}x{2 * SIZE}"
EDITS = [
    ("enhance", {"json": {"scaleSize": "2x"}}, DOUBLE, "2x"),
    ("outpaint", {"json": {"canvasSize": [SIZE + SIZE // 4, SIZE], "originalImageSize": [SIZE, SIZE],
                           "originalImageLocation": [SIZE // 8, 0]}}, f"{SIZE + SIZE // 4}x{SIZE}", "1x"),
    ("retry", {"json": {"strength": "subtle"}}, SQUARE, "1x"),
    ("retry", {}, SQUARE, "1x"),
    ("fill", {"files": {"mask": ("m.png", png(centre_mask()), "image/png")}, "data": {"prompt": "a blue bird"}},
     SQUARE, "1x"),
    ("cleanUp", {"files": {"mask": ("m.png", png(centre_mask()), "image/png")}}, SQUARE, "1x"),
    ("removeBg", {}, SQUARE, "1x"),
    ("vectorize", {}, SQUARE, "1x"),
    ("upsize", {}, DOUBLE, "2x"),
]


@pytest.mark.parametrize("op,request_kwargs,resolution,scale", EDITS, ids=[f"{e[0]}-{i}" for i, e in enumerate(EDITS)])
def test_each_edit_makes_a_linked_charged_image(api, op, request_kwargs, resolution, scale):
    source = make_image(api)
    usage = api.get("/api/users/me/usage").json()
    response = api.post(f"/api/images/{source}/{op}", headers={"X-Request-Id": f"req-{op}-{len(request_kwargs)}"},
                        **request_kwargs)
    assert response.status_code == 200, response.text
    image = response.json()["image"]
    assert image["resolution"] == resolution and image["scaleSize"] == scale
    assert image["EditInfo"]["main"] == op and image["EditInfo"]["sourceImageId"] == source
    assert image["imageId"] != source and image["ownerId"] == api.get("/api/users/me").json()["userId"]
    after = api.get("/api/users/me/usage").json()
    charged = int(response.headers["X-Credits-Consumed"])
    assert after["currentCredit"] == usage["currentCredit"] - charged == int(response.headers["X-Remaining-Credits"])
    assert after["editCount"] == usage["editCount"] + 1
    result = read(api, image["imageId"], type="png")
    assert f"{result.shape[1]}x{result.shape[0]}" == resolution
    if op == "removeBg":
        assert result.shape[2] == 4 and (result[..., 3] < 128).any() and (result[..., 3] > 128).any()
    if op == "vectorize":
        svg = api.get(f"/api/images/{image['imageId']}/binary")
        assert svg.headers["content-type"] == "image/svg+xml" and b"<svg" in svg.content[:500]
    if op in ("fill", "cleanUp"):
        before, outside = read(api, source)[..., :3], ~centre_mask()
        assert np.array_equal(before[outside][:1000], result[..., :3][outside][:1000]) or op == "cleanUp"
        assert not np.array_equal(before, result[..., :3])


def test_enhance_shows_in_upscaled_and_upscale_info(api):
    source = make_image(api)
    made = api.post(f"/api/images/{source}/enhance", json={"scaleSize": "2x"}).json()["image"]["imageId"]
    assert [u["imageId"] for u in api.get(f"/api/images/{source}").json()["Upscaled"]] == [made]
    assert api.get(f"/api/images/{made}").json()["UpscaleInfo"]["imageId"] == source


@pytest.mark.parametrize("body,name", [({"scaleSize": "1x"}, "invalid_request"), ({"scaleSize": "3x"}, "invalid_request"),
                                       ({"scaleSize": "2x", "imageId": 1}, "invalid_request")])
def test_enhance_refusals(api, body, name):
    assert_error(api.post(f"/api/images/{make_image(api)}/enhance", json=body), 400, name)


def test_enhance_too_large_is_refused_before_charging(api):
    source = make_image(api)
    big = api.post(f"/api/images/{source}/enhance", json={"scaleSize": "4x"}).json()["image"]["imageId"]
    before = api.get("/api/users/me/usage").json()  # 8x of 4x would be 32 times the side: past 8192 px
    assert_error(api.post(f"/api/images/{big}/enhance", json={"scaleSize": "8x"}), 413, "image_too_large")
    assert api.get("/api/users/me/usage").json() == before


@pytest.mark.parametrize("body", [
    {"canvasSize": [1024, 1024], "originalImageSize": [512, 512], "originalImageLocation": [2000, 0]},
    {"canvasSize": [0, 1024], "originalImageSize": [512, 512], "originalImageLocation": [0, 0]},
    {"canvasSize": [99999, 1024], "originalImageSize": [512, 512], "originalImageLocation": [0, 0]},
    {"canvasSize": [1024.5, 1024], "originalImageSize": [512, 512], "originalImageLocation": [0, 0]},
])
def test_outpaint_refusals(api, body):
    before = api.get("/api/users/me/usage").json()
    response = api.post(f"/api/images/{make_image(api)}/outpaint", json=body)
    assert response.status_code == 400 and response.json()["data"] in ("invalid_outpaint", "invalid_request")
    assert api.get("/api/users/me/usage").json()["editCount"] == before["editCount"]


def test_outpaint_with_negative_location_keeps_the_visible_original(api):
    source = make_image(api)
    left, down = SIZE // 5, SIZE // 4
    body = {"canvasSize": [SIZE, SIZE], "originalImageSize": [SIZE, SIZE], "originalImageLocation": [-left, down]}
    made = api.post(f"/api/images/{source}/outpaint", json=body).json()["image"]["imageId"]
    assert np.array_equal(read(api, made)[down:, :SIZE - left, :3], read(api, source)[:SIZE - down, left:, :3])


@pytest.mark.parametrize("files,status,name", [
    ({"mask": ("m.txt", b"hello", "text/plain")}, 415, "unsupported_media_type"),
    ({"mask": ("m.png", png(np.zeros((SIZE, SIZE), bool)), "image/png")}, 400, "empty_mask"),
    ({"mask": ("m.png", png(centre_mask(SIZE // 2)), "image/png")}, 400, "mask_size_mismatch"),
    ({"mask": ("m.png", b"", "image/png")}, 400, "invalid_mask"),
    ({"mask": ("m.png", b"\x89PNG\r\n\x1a\n", "image/png")}, 400, "invalid_mask"),
])
def test_mask_refusals(api, files, status, name):
    source = make_image(api)
    assert_error(api.post(f"/api/images/{source}/cleanUp", files=files), status, name)
    assert_error(api.post(f"/api/images/{source}/fill", files=files, data={"prompt": "x"}), status, name)


def test_a_mask_in_any_format_at_the_image_size_is_read(api):
    source = make_image(api)
    buffer = io.BytesIO()
    Image.fromarray(centre_mask().astype(np.uint8) * 255).convert("RGB").save(buffer, "JPEG", quality=95)
    made = api.post(f"/api/images/{source}/cleanUp", files={"mask": ("m.jpg", buffer.getvalue(), "image/jpeg")})
    assert made.status_code == 200
    before, after = read(api, source)[..., :3], read(api, made.json()["image"]["imageId"])[..., :3]
    inside = slice(SIZE // 2 - SIZE // 10, SIZE // 2 + SIZE // 10)
    assert np.array_equal(before[:SIZE // 4], after[:SIZE // 4]) and not np.array_equal(before[inside, inside],
                                                                                      after[inside, inside])


def test_a_transposed_mask_is_refused_uncharged(api):
    """A 9:16 mask on a 16:9 image: 400 mask_size_mismatch naming both sizes, nothing charged or counted."""
    source = make_image(api, ratio="16:9")
    before = api.get("/api/users/me/usage").json()
    short = SIZE * 9 // 16
    tall = np.zeros((SIZE, short), bool)
    tall[SIZE // 3:SIZE // 2, short // 3:short // 2] = True
    for op, extra in (("cleanUp", {}), ("fill", {"data": {"prompt": "a kite"}})):
        body = assert_error(api.post(f"/api/images/{source}/{op}", files={"mask": ("m.png", png(tall), "image/png")},
                                     **extra), 400, "mask_size_mismatch")
        assert f"{short}x{SIZE}" in body["message"] and f"{SIZE}x{short}" in body["message"]
    after = api.get("/api/users/me/usage").json()
    assert (after["currentCredit"], after["editCount"]) == (before["currentCredit"], before["editCount"])


def test_fill_needs_prompt_and_mask(api):
    source = make_image(api)
    assert_error(api.post(f"/api/images/{source}/fill", data={"prompt": "x"}), 400, "invalid_request")
    assert_error(api.post(f"/api/images/{source}/fill", files={"mask": ("m.png", png(centre_mask()), "image/png")}),
                 400, "invalid_request")


def test_edits_need_a_ready_own_image(sandbox, api, client_for):
    other = client_for()
    theirs = make_image(other)
    assert_error(api.post(f"/api/images/{theirs}/upsize"), 404, "image_not_found")
    assert_error(api.post("/api/images/999999999/upsize"), 404, "image_not_found")
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    httpx.post(f"{sandbox.url}/sandbox/faults", json={"fail_generation_rate": 1.0}, verify=TLS, timeout=120)
    try:
        failed = api.post("/api/images/create", json={"prompt": "x", "styleId": style}).json()["images"][0]["imageId"]
    finally:
        httpx.delete(f"{sandbox.url}/sandbox/faults", verify=TLS, timeout=120)
    assert_error(api.post(f"/api/images/{failed}/upsize"), 409, "image_not_ready")


def test_platform_and_request_id_headers_are_validated(api):
    source = make_image(api)
    assert_error(api.post(f"/api/images/{source}/upsize", headers={"X-Platform": "tv"}), 400, "invalid_platform")
    assert_error(api.post(f"/api/images/{source}/upsize", headers={"X-Request-Id": "bad id with spaces"}),
                 400, "invalid_request_id")
    assert api.post(f"/api/images/{source}/upsize", headers={"X-Request-Id": "dup-1"}).status_code == 200
    assert_error(api.post(f"/api/images/{source}/upsize", headers={"X-Request-Id": "dup-1"}), 409, "duplicate_request_id")


def test_edit_limit(sandbox, client_for):
    api = client_for("free")
    httpx.post(f"{sandbox.url}/sandbox/users/{api.user_id}/credits", json={"defaultCredit": 400}, verify=TLS, timeout=120)
    cap = api.get("/api/users/me/usage").json()["maxEditCount"]
    source = make_image(api)
    for _ in range(cap):  # upsize: the lightest edit, and every kind counts alike
        assert api.post(f"/api/images/{source}/upsize").status_code == 200
    assert_error(api.post(f"/api/images/{source}/removeBg"), 403, "edit_limit_exceeded")
    assert api.get("/api/users/me/usage").json()["editCount"] == cap


def test_enterprise_special_limits_and_edit_period(own_sandbox):
    from tests.utils.users import make_user

    user_id, key = make_user(own_sandbox, "enterprise")
    httpx.patch(f"{own_sandbox.url}/sandbox/users/{user_id}/enterprise",
                json={"hasSpecialLimits": True, "specialLimits": {"upsize": 1}, "editCountPeriod": "day"}, verify=TLS)
    with httpx.Client(base_url=own_sandbox.url, headers={"X-Api-Key": key}, timeout=60, verify=TLS) as api:
        source = make_image(api)
        assert api.post(f"/api/images/{source}/upsize").status_code == 200
        assert_error(api.post(f"/api/images/{source}/upsize"), 403, "special_limit_exceeded")
        assert api.post(f"/api/images/{source}/removeBg").status_code == 200
        assert api.get("/api/users/me/usage").json()["editCount"] == 2
        httpx.post(f"{own_sandbox.url}/sandbox/clock/advance", json={"seconds": 86400}, verify=TLS, timeout=120)
        assert api.get("/api/users/me/usage").json()["editCount"] == 0
        assert api.post(f"/api/images/{source}/upsize").status_code == 200
