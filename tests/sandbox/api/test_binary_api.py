"""GET /api/images/{id}/binary and GET /api/images/{id}: types, scale, watermark, collections."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tests.helpers import SIZE, assert_error

WIDTH, HEIGHT = SIZE, SIZE * 3 // 4
"""The 4:3 image of ``image_id``."""


@pytest.fixture
def image_id(api) -> int:
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    return api.post("/api/images/create", json={"prompt": "a blue whale", "styleId": style, "ratio": "4:3"}).json()["images"][0]["imageId"]


@pytest.mark.parametrize("kind,media,magic", [("png", "image/png", b"\x89PNG"), ("jpeg", "image/jpeg", b"\xff\xd8"),
                                              ("webp", "image/webp", b"RIFF"), (None, "image/png", b"\x89PNG")])
def test_types(api, image_id, kind, media, magic):
    response = api.get(f"/api/images/{image_id}/binary", params={"type": kind} if kind else {})
    assert response.status_code == 200 and response.headers["content-type"] == media
    assert response.content.startswith(magic)
    assert Image.open(io.BytesIO(response.content)).size == (WIDTH, HEIGHT)


def test_scale_size(api, image_id):
    response = api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "2x", "type": "jpeg"})
    assert Image.open(io.BytesIO(response.content)).size == (2 * WIDTH, 2 * HEIGHT)
    assert_error(api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "9x"}), 400, "invalid_request")
    assert_error(api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "2"}), 400, "invalid_request")


def test_watermark_changes_pixels_and_free_plan_is_always_marked(api, image_id, client_for):
    def grab(client, iid, **params):
        return np.asarray(Image.open(io.BytesIO(client.get(f"/api/images/{iid}/binary", params=params).content)).convert("RGB"), int)

    clean, marked = grab(api, image_id), grab(api, image_id, watermark="true")
    assert np.abs(clean - marked).mean() > 1 and (np.abs(clean - marked).max(axis=2) == 0).mean() > 0.5
    free = client_for("free")
    style = free.get("/api/users/me/styles").json()[0]["styleId"]
    free_id = free.post("/api/images/create", json={"prompt": "a blue whale", "styleId": style}).json()["images"][0]["imageId"]
    assert np.array_equal(grab(free, free_id), grab(free, free_id, watermark="true"))


def test_svg_only_for_vectorized(api, image_id):
    assert_error(api.get(f"/api/images/{image_id}/binary", params={"type": "svg"}), 400, "svg_not_available")
    assert_error(api.get(f"/api/images/{image_id}/binary", params={"type": "gif"}), 400, "invalid_request")


def test_collection_flag_reads_collection_items(api, sandbox):
    import sqlite3

    with sqlite3.connect(sandbox.data_dir / "sandbox.db") as db:
        item = db.execute("select image_id from images where member_of = 1 limit 1").fetchone()[0]
    assert api.get(f"/api/images/{item}/binary", params={"isCollection": "true"}).status_code == 200
    meta = api.get(f"/api/images/{item}").json()
    assert meta["CollectionInfo"]["enabled"] is True and meta["CollectionInfo"]["CollectionEnTags"]
    assert_error(api.get(f"/api/images/{meta['imageId'] + 10**6}/binary", params={"isCollection": "true"}),
                 404, "image_not_found")


def test_own_image_is_not_a_collection_item(api, image_id):
    assert_error(api.get(f"/api/images/{image_id}/binary", params={"isCollection": "true"}), 404, "image_not_found")


def test_meta_records_downloads(api, image_id):
    api.get(f"/api/images/{image_id}/binary")
    meta = api.get(f"/api/images/{image_id}").json()
    assert meta["generationStatus"] == "COMPLETED" and meta["resolution"] == f"{WIDTH}x{HEIGHT}"
    assert meta["DownloadLog"] and meta["DownloadLog"][0]["imageId"] == image_id
    assert meta["Owner"]["name"] and meta["Likes"] == [] and "UpscaleInfo" not in meta


@pytest.mark.parametrize("bad", ["0", "-3", "abc", str(2**60)])
def test_bad_ids(api, bad):
    assert_error(api.get(f"/api/images/{bad}"), 400, "invalid_request")
