"""The render cache on a real folder: bounded, least recently used out first, shared by several
workers (two caches over one folder stand for two ``serve`` workers), and a variant being read
outlives its eviction by another worker."""

from __future__ import annotations

import os
from pathlib import Path

from imagekit.sandbox.store.disk import DiskSpace
from imagekit.sandbox.store.render_cache import RenderCache


def two_workers(folder: Path, limit: int) -> tuple[RenderCache, RenderCache]:
    disk = DiskSpace(folder.parent)
    return RenderCache(folder, limit, disk), RenderCache(folder, limit, disk)


def kept(folder: Path) -> set[str]:
    return {path.name for path in folder.iterdir()}


def test_the_least_recently_used_go_first_whichever_worker_used_them(tmp_path):
    """Figures: room for two of three 1000-byte variants; 2 goes (1 was used since), 2000 bytes kept."""
    one, two = two_workers(tmp_path / "cache", 2500)
    one.put("1-2x.png", b"1" * 1000).close()
    two.put("2-2x.png", b"2" * 1000).close()
    one.open("1-2x.png").close()  # a hit in one worker: 1 is now the most recently used
    two.put("3-2x.png", b"3" * 1000).close()
    assert kept(tmp_path / "cache") == {"1-2x.png", "3-2x.png"} and one.size() == two.size() == 2000


def test_a_variant_being_read_reads_whole_after_another_worker_evicts_it(tmp_path):
    """Figures: the variant's name is gone from the folder; all 300000 bytes still read."""
    one, two = two_workers(tmp_path / "cache", 400_000)
    data = os.urandom(300_000)
    reading = one.put("1-8x.png", data)
    assert reading is not None
    head = reading.read(1000)
    two.put("2-8x.png", os.urandom(300_000)).close()  # no room for both: 1, the older, goes
    assert kept(tmp_path / "cache") == {"2-8x.png"}
    assert head + reading.read() == data
    reading.close()


def test_a_variant_larger_than_the_cache_is_not_kept_and_nothing_is_evicted_for_it(tmp_path):
    cache, _ = two_workers(tmp_path / "cache", 1000)
    cache.put("1-2x.png", b"1" * 600).close()
    assert cache.put("2-8x.png", b"2" * 1001) is None
    assert kept(tmp_path / "cache") == {"1-2x.png"}
    none, _ = two_workers(tmp_path / "none", 0)
    assert none.put("1-2x.png", b"1") is None and kept(tmp_path / "none") == set()


def test_sweep_removes_variants_of_unknown_images_and_leftovers_of_interrupted_writes(tmp_path):
    cache, _ = two_workers(tmp_path / "cache", 10_000)
    for name in ("1-2x.png", "1-4x-marked.jpeg", "2-2x.png", ".tmp-abc"):
        (tmp_path / "cache" / name).write_bytes(b"x")
    assert cache.sweep({"1"}) == 2 and kept(tmp_path / "cache") == {"1-2x.png", "1-4x-marked.jpeg"}
