"""Scaled and watermarked binaries are rendered once, kept on disk, streamed from there, and rendered
one at a time however many downloads ask at once."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor

import httpx
from PIL import Image

from imagekit.sandbox import EmbeddedSandbox
from tests.conftest import make_user


def images(api: httpx.Client, count: int) -> list[int]:
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    made = api.post("/api/images/create", json={"prompt": "a kite", "styleId": style, "count": count})
    return [image["imageId"] for image in made.raise_for_status().json()["images"]]


def test_a_variant_is_rendered_once_and_kept_across_restarts(tmp_path):
    with EmbeddedSandbox(tmp_path / "box", base_size=256) as box:
        _, key = make_user(box, "free")  # the free plan watermarks: every download is a rendered variant
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120) as api:
            image_id = images(api, 1)[0]
            first = api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "4x"})
            second = api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "4x"})
            assert first.status_code == second.status_code == 200 and first.content == second.content
            assert Image.open(io.BytesIO(first.content)).size == (1024, 1024)
            assert int(first.headers["content-length"]) == len(first.content)
            assert box.sandbox.renderer.renders == 1
            assert len(list((box.data_dir / "images" / "cache").glob(f"{image_id}-4x-marked.png"))) == 1
            api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "4x", "type": "jpeg"}).raise_for_status()
            assert box.sandbox.renderer.renders == 2  # another type is another variant
    with EmbeddedSandbox(tmp_path / "box", base_size=256) as box:
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120) as api:
            again = api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "4x"})
            assert again.content == first.content and box.sandbox.renderer.renders == 0


def test_parallel_downloads_render_one_at_a_time_and_each_variant_once(tmp_path):
    with EmbeddedSandbox(tmp_path / "box", base_size=256) as box:
        _, key = make_user(box, "pro")
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120) as api:
            ids = images(api, 4)
            asks = [(image_id, scale) for image_id in ids for scale in ("8x", "8x", "4x")]

            def download(ask):
                return api.get(f"/api/images/{ask[0]}/binary", params={"scaleSize": ask[1]})

            with ThreadPoolExecutor(len(asks)) as pool:
                answers = list(pool.map(download, asks))
        assert [answer.status_code for answer in answers] == [200] * len(asks)
        assert {Image.open(io.BytesIO(a.content)).size for a, (_, s) in zip(answers, asks) if s == "8x"} == {(2048, 2048)}
        assert box.sandbox.renderer.renders == len(set(asks)) == 8
        assert box.sandbox.renderer.peak == 1
