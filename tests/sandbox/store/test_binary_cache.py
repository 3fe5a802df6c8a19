"""Scaled and watermarked binaries are rendered once, kept on disk within the render cache's bound
(least recently used out first), streamed from there, and rendered one at a time however many
downloads ask at once."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor

import httpx
from PIL import Image

from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import TLS
from tests.utils.users import make_user

from ..serving import imagekit, serving


def images(api: httpx.Client, count: int) -> list[int]:
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    made = api.post("/api/images/create", json={"prompt": "a kite", "styleId": style, "count": count})
    return [image["imageId"] for image in made.raise_for_status().json()["images"]]


def test_a_variant_is_rendered_once_and_kept_across_restarts(tmp_path):
    with EmbeddedSandbox(tmp_path / "box", base_size=256) as box:
        _, key = make_user(box, "free")  # the free plan watermarks: every download is a rendered variant
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as api:
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
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as api:
            again = api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "4x"})
            assert again.content == first.content and box.sandbox.renderer.renders == 0


def test_parallel_downloads_render_one_at_a_time_and_each_variant_once(tmp_path):
    with EmbeddedSandbox(tmp_path / "box", base_size=256) as box:
        _, key = make_user(box, "pro")
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as api:
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


def lru_kept(uses: list[int], sizes: dict[int, int], bound: int) -> set[int]:
    """What a cache of ``bound`` bytes holds after ``uses``: the most recently used that fit together."""
    total, kept = 0, set()
    for image_id in dict.fromkeys(reversed(uses)):  # each at its last use, newest first, until one does not fit
        if total + sizes[image_id] > bound:
            break
        total += sizes[image_id]
        kept.add(image_id)
    return kept


def test_the_cache_keeps_to_its_bound_least_recently_used_out_first(tmp_path):
    """Four 2x variants (each ~0.3 MB), a bound of the first and the larger of the next two. Figures:
    after uses 1, 2, 1, 3 the cache holds 1 and 3 (2 went, the least recently used) within the bound;
    a hit renders nothing (3 renders for 4 answers); after 4, 2, 4 the cache still holds the most
    recently used that fit; a variant larger than the whole cache is answered whole and not kept;
    a restart with a lower bound trims the cache to it. Every answer equals the variant's first."""
    folder = tmp_path / "box"
    with EmbeddedSandbox(folder, base_size=256) as box:  # the variants and their sizes, under the default bound
        _, key = make_user(box, "pro")
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as api:
            ids = images(api, 4)
            first = {i: api.get(f"/api/images/{i}/binary", params={"scaleSize": "2x"}).content for i in ids}
    sizes = {i: len(content) for i, content in first.items()}
    for path in (folder / "images" / "cache").iterdir():
        path.unlink()
    one, two, three, four = ids
    bound = sizes[one] + max(sizes[two], sizes[three])

    def cached() -> set[int]:
        found = {path.name: path.stat().st_size for path in (folder / "images" / "cache").iterdir()}
        assert sum(found.values()) <= bound
        return {int(name.split("-")[0]) for name in found}

    uses: list[int] = []
    with EmbeddedSandbox(folder, base_size=256, render_cache_mb=bound / 2**20) as box:
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as api:
            for image_id in (one, two, one, three):
                assert api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "2x"}).content == first[image_id]
                uses.append(image_id)
                assert cached() == lru_kept(uses, sizes, bound)
            assert cached() == {one, three} and box.sandbox.renderer.renders == 3
            for image_id in (four, two, four):
                assert api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "2x"}).content == first[image_id]
                uses.append(image_id)
                assert cached() == lru_kept(uses, sizes, bound)
            before = cached()
            large = api.get(f"/api/images/{one}/binary", params={"scaleSize": "4x"})
            assert large.status_code == 200 and Image.open(io.BytesIO(large.content)).size == (1024, 1024)
            assert cached() == before
    bound = sizes[four]  # room for the most recently used alone
    with EmbeddedSandbox(folder, base_size=256, render_cache_mb=bound / 2**20):
        assert cached() == lru_kept(uses, sizes, bound) == {four}


def test_serve_render_cache_mb_0_keeps_no_variant(tmp_path):
    """Figures: two 2x downloads answer the same bytes; 2 renders; 0 files in images/cache."""
    folder = tmp_path / "sbx"
    key = imagekit("sandbox", "init", "--data", str(folder)).stdout.strip().splitlines()[-1]
    with serving(folder, "--render-cache-mb", "0", "--base-size", "256") as served:
        with httpx.Client(base_url=served.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as api:
            image_id = images(api, 1)[0]
            answers = [api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "2x"}) for _ in range(2)]
    assert answers[0].status_code == answers[1].status_code == 200 and answers[0].content == answers[1].content
    assert list((folder / "images" / "cache").iterdir()) == []
