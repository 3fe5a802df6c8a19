"""A full disk, for real: the sandbox's data folder on a small tmpfs, filled with a file, driven through
the HTTP API. A full disk answers 507 insufficient_storage in the error shape; what could not be
stored is not charged; no image stays PENDING; no file or row is left half-written; reads go on;
freeing space is all the sandbox needs to take new work again.

Each test states the figures it checks: answers by status, credits charged, rows by status, files.
"""

from __future__ import annotations

import errno
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from imagekit.sandbox import EmbeddedSandbox
from imagekit.sandbox.store.disk import HEADROOM, MB, RESERVE, RESERVE_NAME, is_full
from tests.disk import fill, leave_free, mount_tmpfs, unmount
from tests.helpers import TLS, assert_error, balance, image_files, wait_until
from tests.utils.users import make_user

from ..serving import serving

FULL = "insufficient_storage"


def short_of(box: EmbeddedSandbox, filler: Path, size: int) -> None:
    """Leave room enough to pass the sandbox's up-front check (putting its reserve back if it was
    given up) but not for a file of ``size`` bytes."""
    reserve = 0 if (box.data_dir / RESERVE_NAME).exists() else RESERVE
    leave_free(filler, reserve + HEADROOM + (size - HEADROOM) // 2)


def edit_count(api: httpx.Client) -> int:
    return api.get("/api/users/me/usage").raise_for_status().json()["editCount"]


def rows(box: EmbeddedSandbox, user_id: int, since: int = 0) -> dict[str, int]:
    """The user's image rows after image ``since`` by status, read from the SQLite file."""
    with sqlite3.connect(f"file:{box.data_dir / 'sandbox.db'}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT status, count(*) FROM images WHERE owner_id = ? AND image_id > ? "
                               "GROUP BY status", (user_id, since)))


def files(box: EmbeddedSandbox) -> tuple[set[str], set[str]]:
    """Files in the image folder, and those the COMPLETED rows name."""
    found = image_files(box.data_dir / "images")
    with sqlite3.connect(f"file:{box.data_dir / 'sandbox.db'}?mode=ro", uri=True) as db:
        named = db.execute("SELECT file_name, vector_file FROM images WHERE status = 'COMPLETED'").fetchall()
    return found, {name for pair in named for name in pair if name}


def cached(box: EmbeddedSandbox) -> set[str]:
    return {path.name for path in (box.data_dir / "images" / "cache").iterdir()}


@contextmanager
def held_database(box: EmbeddedSandbox) -> Iterator[None]:
    """Hold the sandbox's SQLite write lock (its writers wait, readers go on) until the block ends."""
    db = sqlite3.connect(box.data_dir / "sandbox.db", isolation_level=None, timeout=30)
    try:
        db.execute("BEGIN IMMEDIATE")
        yield
        db.execute("ROLLBACK")
    finally:
        db.close()


def settled_yet(box: EmbeddedSandbox, image_id: int) -> bool:
    with sqlite3.connect(f"file:{box.data_dir / 'sandbox.db'}?mode=ro", uri=True) as db:
        return db.execute("SELECT status FROM images WHERE image_id = ?", (image_id,)).fetchone()[0] != "PENDING"


def create(api: httpx.Client, style: int, **body) -> httpx.Response:
    return api.post("/api/images/create", json={"prompt": "a kite over the sea", "styleId": style, **body})


def settled(api: httpx.Client, image_id: int) -> dict:
    """The image's metadata once it is no longer PENDING (polled)."""
    meta: dict = {}

    def done() -> bool:
        meta.update(api.get(f"/api/images/{image_id}").raise_for_status().json())
        return meta["generationStatus"] != "PENDING"

    wait_until(done, what=f"image {image_id} settled")
    return meta


@pytest.fixture
def user_box(small_disk: Path, request: pytest.FixtureRequest) -> Iterator[tuple[EmbeddedSandbox, httpx.Client, int]]:
    """An embedded sandbox on the small disk (its settings are the test's indirect parameter) and a
    pro user's client: (sandbox, client, user id)."""
    settings = getattr(request, "param", {})
    with EmbeddedSandbox(small_disk / "box", **settings) as box:
        user_id, key = make_user(box, "pro")
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120, verify=TLS) as api:
            yield box, api, user_id


@pytest.mark.parametrize("user_box", [{"base_size": 256}], indirect=True)
def test_a_full_disk_refuses_new_work_by_name_charges_nothing_and_reads_go_on(user_box, small_disk):
    """Disk filled to the last byte. Figures: 5 of 5 charged calls answer 507 insufficient_storage;
    0 credits charged, 0 edits counted; rows stay 1 COMPLETED, 0 PENDING, 0 FAILED; files stay
    the image's and its cached variant; 6 of 6 reads answer 200. Space freed: 2 of 2 calls answer
    200, charged exactly their price, and a variant rendered meanwhile is kept again."""
    box, api, user_id = user_box
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    image_id = create(api, style).raise_for_status().json()["images"][0]["imageId"]
    api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "2x"}).raise_for_status()
    before_files, before_cache = files(box)[0], cached(box)
    before, edits = balance(api), edit_count(api)

    filler = fill(small_disk)
    answers = [create(api, style, count=2), create(api, style, isAsync=True),
               api.post(f"/api/images/{image_id}/retry"), api.post(f"/api/images/{image_id}/removeBg"),
               api.post("/api/images/textToPrompt", json={"text": "a kite"})]
    for answer in answers:
        assert "nothing was charged" in assert_error(answer, 507, FULL)["message"]
    assert balance(api) == before and edit_count(api) == edits
    assert rows(box, user_id, since=image_id - 1) == {"COMPLETED": 1}
    assert files(box)[0] == before_files and cached(box) == before_cache
    reads = [api.get("/api/users/me"), api.get("/api/users/me/usage"), api.get(f"/api/images/{image_id}"),
             api.get(f"/api/images/{image_id}/binary"),
             api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "2x"}),     # cached before
             api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "4x"})]     # rendered now
    assert [read.status_code for read in reads] == [200] * 6
    assert reads[5].content[:8] == b"\x89PNG\r\n\x1a\n" and int(reads[5].headers["content-length"]) == len(reads[5].content)
    assert cached(box) == before_cache  # the 4x was streamed from memory: the disk had no room for it

    filler.unlink()
    made, edited = create(api, style), api.post(f"/api/images/{image_id}/retry")
    assert made.status_code == edited.status_code == 200
    assert made.json()["images"][0]["generationStatus"] == "COMPLETED"
    charged = int(made.headers["X-Credits-Consumed"]) + int(edited.headers["X-Credits-Consumed"])
    assert charged > 0 and before - balance(api) == charged and edit_count(api) == edits + 1
    api.get(f"/api/images/{image_id}/binary", params={"scaleSize": "4x"}).raise_for_status()
    assert f"{image_id}-4x.png" in cached(box)
    assert rows(box, user_id, since=image_id - 1) == {"COMPLETED": 3}
    found, named = files(box)
    assert found == named


@pytest.mark.parametrize("user_box", [{"base_size": 1024}], indirect=True)
def test_images_that_do_not_fit_fail_refunded_and_a_create_with_none_stored_answers_507(user_box, small_disk):
    """Images of ~1.5 MB on a disk left with less room than that. Figures: a 2-image create with room
    for one answers 200 with 1 COMPLETED, 1 FAILED and is charged 1 image; a 1-image create that
    does not fit answers 507, charged 0; the same asynchronously answers 200 PENDING, then FAILED,
    charged 0; an edit that does not fit answers 507, charged 0, not counted. Rows: 0 PENDING;
    files: exactly the COMPLETED rows' files. Space freed: the same edit and create answer 200."""
    box, api, user_id = user_box
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    first = create(api, style, count=2, seed=7).raise_for_status()
    price = int(first.headers["X-Credits-Consumed"]) // 2
    source = first.json()["images"][0]["imageId"]
    since = source - 1
    sizes = [(box.data_dir / "images" / f"{image['imageId']}.png").stat().st_size for image in first.json()["images"]]
    assert min(sizes) > HEADROOM + MB // 4, sizes  # what the figures below rest on: each image outgrows the headroom
    before, edits = balance(api), edit_count(api)

    filler = fill(small_disk, leave=sizes[0] + HEADROOM + 64 * 1024)  # room for the first image only
    partly = create(api, style, count=2, seed=7).raise_for_status()
    statuses = [image["generationStatus"] for image in partly.json()["images"]]
    assert statuses == ["COMPLETED", "FAILED"]
    assert "data folder is full" in partly.json()["images"][1]["generationError"]
    assert int(partly.headers["X-Credits-Consumed"]) == price and balance(api) == before - price

    short_of(box, filler, sizes[0])
    assert_error(create(api, style, seed=7), 507, FULL)
    short_of(box, filler, sizes[0])
    pending = create(api, style, seed=7, isAsync=True).raise_for_status().json()["images"][0]
    assert pending["generationStatus"] == "PENDING"
    assert settled(api, pending["imageId"])["generationStatus"] == "FAILED"
    short_of(box, filler, sizes[0])  # the edit's result (2x the image) is larger still
    assert_error(api.post(f"/api/images/{source}/enhance", json={"scaleSize": "2x"}), 507, FULL)
    assert balance(api) == before - price and edit_count(api) == edits
    assert rows(box, user_id, since) == {"COMPLETED": 3, "FAILED": 3}
    found, named = files(box)
    assert found == named

    filler.unlink()
    assert api.post(f"/api/images/{source}/enhance", json={"scaleSize": "2x"}).status_code == 200
    assert create(api, style, seed=7).json()["images"][0]["generationStatus"] == "COMPLETED"
    assert edit_count(api) == edits + 1 and rows(box, user_id, since) == {"COMPLETED": 5, "FAILED": 3}
    found, named = files(box)
    assert found == named


@pytest.mark.parametrize("user_box", [{"base_size": 256, "latency": 3.0}], indirect=True)
def test_a_disk_that_fills_while_an_image_settles_leaves_it_failed_and_refunded(user_box, small_disk):
    """The image's file is written, then the disk fills before its row can say COMPLETED (the SQLite
    database shares the disk). Figures: the create answered 200 PENDING; the image ends FAILED, 0
    credits charged, 0 slots held, 0 PENDING rows, its file removed; the reserve was given up to
    settle it, and is back once space is freed and the next create answers 200 COMPLETED."""
    box, api, user_id = user_box
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    before = balance(api)
    pending = create(api, style, isAsync=True).raise_for_status().json()["images"][0]
    stored = box.data_dir / "images" / f"{pending['imageId']}.png"
    with held_database(box):  # the settle waits for the database while the disk fills, however slow the machine
        assert settled_yet(box, pending["imageId"]) is False, "settled within the latency: raise it"
        wait_until(stored.exists, what="the image's file")
        filler = fill(small_disk)

    meta = settled(api, pending["imageId"])
    assert meta["generationStatus"] == "FAILED" and "data folder is full" in meta["generationError"]
    assert balance(api) == before and box.sandbox.gate.running(user_id) == 0
    since = pending["imageId"] - 1
    assert rows(box, user_id, since) == {"FAILED": 1} and not stored.exists()
    assert not (box.data_dir / RESERVE_NAME).exists()

    filler.unlink()
    assert create(api, style).json()["images"][0]["generationStatus"] == "COMPLETED"
    assert (box.data_dir / RESERVE_NAME).exists() and rows(box, user_id, since) == {"FAILED": 1, "COMPLETED": 1}


def test_serve_warns_at_start_when_space_is_low(tmp_path, small_disk):
    """Figures: on 32 MB, one `warning:` line naming the folder and 507; on 1 GB free, none."""
    for disk, warned in ((small_disk, True), (tmp_path / "roomy", False)):
        if not warned:
            mount_tmpfs(disk, "1g")  # a limit, not an allocation: a tmpfs takes memory only as it fills
        try:
            with serving(disk / "sbx") as served:
                httpx.get(served.url + "/openapi.json", verify=TLS, timeout=120).raise_for_status()
            warnings = [line for line in served.output().splitlines() if line.startswith("warning:")]
        finally:
            if not warned:
                unmount(disk)
        assert len(warnings) == int(warned), warnings
        if warned:
            assert str(disk / "sbx") in warnings[0] and "507 insufficient_storage" in warnings[0]


def test_a_full_disk_is_told_from_other_failures(tmp_path, small_disk):
    """``is_full`` on real errors: ENOSPC from a full tmpfs, SQLITE_FULL from SQLite (bare and inside
    SQLAlchemy's error) say full; a permission error and a locked database do not."""
    fill(small_disk)
    with pytest.raises(OSError) as no_space:
        (small_disk / "more").write_bytes(bytes(MB))
    engine = create_engine(f"sqlite:///{tmp_path / 'capped.db'}")
    with engine.connect() as db, pytest.raises(OperationalError) as capped:
        db.execute(text("PRAGMA max_page_count = 4"))  # SQLite's own cap: a full database, SQLITE_FULL
        db.execute(text("CREATE TABLE blobs (data BLOB)"))
        db.execute(text("INSERT INTO blobs VALUES (zeroblob(100000))"))
    engine.dispose()
    assert is_full(no_space.value) and is_full(capped.value) and is_full(capped.value.orig)
    assert not is_full(PermissionError(errno.EACCES, "denied"))
    assert not is_full(sqlite3.OperationalError("database is locked"))


@pytest.mark.slow(8)
@pytest.mark.parametrize("user_box", [{"base_size": 256, "latency": 0.5}], indirect=True)
def test_freeing_space_brings_new_work_back_every_time(user_box, small_disk):
    """Filled and freed four times, with work running as the disk fills (its writes, and the slot
    renewals behind it, meet the full disk at whatever moment): each time the disk is full new work
    answers 507 and is not charged, and each time space is freed the very next create and edit
    answer 200, charged their price once."""
    box, api, user_id = user_box
    style = api.get("/api/users/me/styles").json()[0]["styleId"]
    image_id = create(api, style).raise_for_status().json()["images"][0]["imageId"]
    for _ in range(4):
        running = create(api, style, isAsync=True, count=2).raise_for_status().json()["images"]
        filler = fill(small_disk)
        for image in running:
            settled(api, image["imageId"])  # made, or failed and refunded: either way settled on the full disk
        time.sleep(2.5)  # a slot renewal or two meet the full disk too
        before = balance(api)
        assert_error(create(api, style), 507, FULL)
        assert_error(api.post(f"/api/images/{image_id}/retry"), 507, FULL)
        assert balance(api) == before
        filler.unlink()
        made, edited = create(api, style), api.post(f"/api/images/{image_id}/retry")
        assert (made.status_code, edited.status_code) == (200, 200), (made.text, edited.text)
        assert made.json()["images"][0]["generationStatus"] == "COMPLETED"
        assert before - balance(api) == int(made.headers["X-Credits-Consumed"]) + int(edited.headers["X-Credits-Consumed"])
    found, named = files(box)
    assert found == named
