"""A served sandbox killed (-9) with creates and edits in flight, then started again: every unfinished
operation is settled at start (refunded, not counted), stray files are removed, and request ids
stay used across the restart."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text

from imagekit.sandbox.store.db import normalize_url
from tests.helpers import TLS, assert_error, balance, db_args, image_files, on_both_databases, wait_until

from ..serving import imagekit, serving, start_serving

pytestmark = on_both_databases
EDITS_IN_FLIGHT = ("removeBg", "vectorize", "upsize")


def edit_count(api: httpx.Client) -> int:
    return api.get("/api/users/me/usage").raise_for_status().json()["editCount"]


def files_and_owners(folder: Path, url: str | None) -> tuple[set[str], set[str]]:
    """Files in the image folder, and the files COMPLETED image rows name (read from the database)."""
    files = image_files(folder / "images")
    engine = create_engine(normalize_url(url) if url else f"sqlite:///{folder / 'sandbox.db'}")
    with engine.connect() as db:
        rows = db.execute(text("SELECT file_name, vector_file FROM images WHERE status = 'COMPLETED'")).all()
    engine.dispose()
    return files, {name for row in rows for name in row if name}


def client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=120, verify=TLS)


@pytest.mark.slow(15)
def test_kill_with_work_in_flight_then_restart(tmp_path, new_database):
    folder, url = tmp_path / "data", new_database()
    db = db_args(url)
    imagekit("sandbox", "init", "--data", str(folder), *db)
    key = imagekit("sandbox", "user", "add", "--data", str(folder), *db, "--email", "crash@x.io",
                   "--plan", "pro").stdout.strip().splitlines()[-1]

    # First run: one create and one edit complete; their charges are the only ones that may stay.
    with serving(folder, *db) as served, client(served.url, key) as api:
        initial = balance(api)
        style = api.get("/api/users/me/styles").json()[0]["styleId"]
        made = api.post("/api/images/create", json={"prompt": "a red kite", "styleId": style}).raise_for_status()
        image_id = made.json()["images"][0]["imageId"]
        api.post(f"/api/images/{image_id}/retry", headers={"X-Request-Id": "done-1"}).raise_for_status()
        after_completed = balance(api)
        assert after_completed < initial and edit_count(api) == 1

    # Second run: slow, so a create (async) and three edits are charged and running when it dies.
    served = start_serving(folder, *db, "--latency", "120")
    try:
        with client(served.url, key) as api:
            pending = api.post("/api/images/create", json={"prompt": "a kite", "styleId": style, "count": 2,
                                                           "isAsync": True}).raise_for_status().json()["images"]
            assert {image["generationStatus"] for image in pending} == {"PENDING"}

            def edit(op: str) -> None:
                try:
                    with client(served.url, key) as own:
                        own.post(f"/api/images/{image_id}/{op}", headers={"X-Request-Id": f"flight-{op}"})
                except httpx.TransportError:
                    pass  # the server dies under it

            threads = [threading.Thread(target=edit, args=(op,)) for op in EDITS_IN_FLIGHT]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 60
            while edit_count(api) < 1 + len(EDITS_IN_FLIGHT):  # charged edits count while they run
                assert time.monotonic() < deadline, "the edits never started"
                time.sleep(0.05)  # polling another process's state: nothing to wait on
            assert balance(api) < after_completed
    finally:
        served.process.send_signal(signal.SIGKILL)
        served.process.wait(30)
    for thread in threads:
        thread.join(60)
    (folder / "images" / "999999.png").write_bytes(b"left by a render that never committed")
    (folder / "images" / ".tmp-abc123").write_bytes(b"half a file")
    (folder / "images" / "cache" / ".tmp-def456").write_bytes(b"half a cached variant")

    if url:  # a shared database: a start settles only work whose lease ran out (another server's may live)
        engine = create_engine(normalize_url(url))
        with engine.connect() as db_now:
            wait_until(lambda: not db_now.execute(text(
                "SELECT count(*) FROM running_slots WHERE expires_at > clock_timestamp() AT TIME ZONE 'utc'")).scalar(),
                timeout=120, what="the killed server's leases ran out")
        engine.dispose()

    # Third and fourth runs: recovery settled everything once, and a second start changes nothing.
    for _ in range(2):
        with serving(folder, *db) as served, client(served.url, key) as api:
            assert balance(api) == after_completed
            assert edit_count(api) == 1
            for image in pending:
                meta = api.get(f"/api/images/{image['imageId']}").json()
                assert meta["generationStatus"] == "FAILED" and meta["generationError"]
            for request_id in ("done-1", *(f"flight-{op}" for op in EDITS_IN_FLIGHT)):
                reused = api.post(f"/api/images/{image_id}/retry", headers={"X-Request-Id": request_id})
                assert_error(reused, 409, "duplicate_request_id")
                assert api.post(f"/api/images/cancelEdit/{request_id}").json() == "not_running"
            assert balance(api) == after_completed and edit_count(api) == 1
        files, owned = files_and_owners(folder, url)
        assert files == owned
        assert list((folder / "images" / "cache").glob(".tmp-*")) == []

