"""textToPrompt and imageToPrompt over HTTP: deterministic, counted, read only what is allowed."""

from __future__ import annotations

import base64
import io
import re

import httpx
import pytest
from PIL import Image, ImageDraw

from tests.helpers import TLS, assert_error, on_both_databases

pytestmark = on_both_databases


def test_text_to_prompt_is_deterministic_and_counted(api):
    style = api.get("/api/users/me/styles").json()[0]
    first = api.post("/api/images/textToPrompt", json={"text": "a cat on a roof", "styleId": style["styleId"]})
    again = api.post("/api/images/textToPrompt", json={"text": "a cat on a roof", "styleId": style["styleId"]}).json()
    body = first.json()
    assert body["initialPrompt"] == "a cat on a roof" and body["enhancedPrompt"].startswith("a cat on a roof, ")
    assert again["enhancedPrompt"] == body["enhancedPrompt"] and again["ttpLogId"] > body["ttpLogId"]
    plain = api.post("/api/images/textToPrompt", json={"text": "a cat on a roof"}).json()["enhancedPrompt"]
    assert plain != body["enhancedPrompt"]
    assert api.get("/api/users/me/usage").json()["ttpCount"] == 3
    assert "X-Credits-Consumed" in first.headers


def test_enhanced_prompt_feeds_create(api):
    enhanced = api.post("/api/images/textToPrompt", json={"text": "y " * 600}).json()["enhancedPrompt"]
    assert len(enhanced) <= 1200
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    made = api.post("/api/images/create", json={"prompt": enhanced, "styleId": style, "initialPrompt": "y",
                                                 "enhancedPrompt": enhanced})
    assert made.status_code == 200


@pytest.mark.parametrize("body,status,name", [({"text": ""}, 400, "invalid_request"), ({"text": "x" * 1201}, 400, "invalid_request"),
                                              ({"text": "   "}, 400, "invalid_request"), ({}, 400, "invalid_request"),
                                              ({"text": "x", "styleId": 10**9}, 404, "style_not_found")])
def test_text_to_prompt_refusals(api, body, status, name):
    assert_error(api.post("/api/images/textToPrompt", json=body), status, name)


def test_prompt_limit(sandbox, client_for):
    api = client_for("free")
    cap = api.get("/api/users/me/usage").json()["maxTtpCount"]
    for _ in range(cap):
        assert api.post("/api/images/textToPrompt", json={"text": "a fox"}).status_code == 200
    assert_error(api.post("/api/images/textToPrompt", json={"text": "a fox"}), 403, "prompt_limit_exceeded")


def red_square_url() -> str:
    picture = Image.new("RGB", (400, 300), "white")
    ImageDraw.Draw(picture).rectangle((150, 100, 250, 200), fill=(220, 20, 20))
    buffer = io.BytesIO()
    picture.save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def test_image_to_prompt_reads_content_in_two_languages(api):
    english = api.post("/api/images/imageToPrompt", json={"image": red_square_url()}).json()
    assert "red" in english["captionPrompt"] and "white" in english["captionPrompt"]
    assert english["captionTPrompt"] == english["captionPrompt"]
    korean = api.post("/api/images/imageToPrompt", json={"image": red_square_url()},
                      headers={"Accept-Language": "ko-KR,ko;q=0.9,en;q=0.8"}).json()
    assert korean["captionPrompt"] == english["captionPrompt"]
    assert re.search("[\uac00-\ud7a3]", korean["captionTPrompt"]) and "빨간색" in korean["captionTPrompt"]


def test_image_to_prompt_of_own_image(api):
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    image = api.post("/api/images/create", json={"prompt": "x", "styleId": style, "ratio": "9:16"}).json()["images"][0]
    caption = api.post("/api/images/imageToPrompt", json={"image": f"/api/images/{image['imageId']}/binary"}).json()
    assert "portrait" in caption["captionPrompt"]


@pytest.mark.parametrize("source,status,name", [
    ("http://169.254.169.254/latest/meta-data", 400, "unsupported_image_source"),
    ("https://example.com/a.png", 400, "unsupported_image_source"),
    ("/api/images/999999999/binary", 404, "image_not_found"),
    ("/etc/passwd", 400, "unsupported_image_source"),
])
def test_image_to_prompt_never_fetches_other_urls(api, source, status, name):
    assert_error(api.post("/api/images/imageToPrompt", json={"image": source}), status, name)


def test_someone_elses_image_is_not_read(sandbox, api, client_for):
    other = client_for()
    style = other.get("/api/users/me/styles").json()[0]["styleId"]
    theirs = other.post("/api/images/create", json={"prompt": "x", "styleId": style}).json()["images"][0]["imageId"]
    assert_error(api.post("/api/images/imageToPrompt", json={"image": f"/api/images/{theirs}/binary"}),
                 404, "image_not_found")
    assert_error(httpx.post(f"{sandbox.url}/api/images/imageToPrompt", json={"image": "x"}, verify=TLS, timeout=120), 403, "not_logged_in")
