"""Recovery on a database several servers share: a server's start settles only dead work."""

from __future__ import annotations

import time

import httpx
import pytest
from sqlalchemy import create_engine, text

from imagekit.sandbox.store.db import normalize_url
from tests.helpers import TLS, balance

from ..serving import imagekit, serving
from .test_recovery import client


@pytest.mark.postgres
@pytest.mark.slow(35)
def test_a_second_server_on_the_database_leaves_the_first_servers_live_work_alone(tmp_path, postgres):
    """Two ``serve`` on one PostgreSQL database with different data folders: the second's start-up
    recovery settles only work whose lease ran out, never the first's running creates, slots or faults."""
    url = postgres.new_database()
    first_folder, second_folder = tmp_path / "first", tmp_path / "second"
    imagekit("sandbox", "init", "--data", str(first_folder), "--db", url)
    key = imagekit("sandbox", "user", "add", "--data", str(first_folder), "--db", url, "--email", "live@x.io",
                   "--plan", "pro").stdout.strip().splitlines()[-1]
    # The first server's create runs 30 s: longer than the second server takes to start on a loaded machine.
    with serving(first_folder, "--db", url, "--latency", "30", "--base-size", "256") as first, \
            client(first.url, key) as api:
        before = balance(api)
        style = api.get("/api/users/me/styles").json()[0]
        running = api.post("/api/images/create", json={"prompt": "a kite", "styleId": style["styleId"], "count": 2,
                                                       "isAsync": True}).raise_for_status().json()["images"]
        httpx.post(f"{first.url}/sandbox/faults", json={"retry_after": 7}, verify=TLS, timeout=120).raise_for_status()
        faults = httpx.get(f"{first.url}/sandbox/faults", verify=TLS, timeout=120).json()
        assert faults["retry_after"] == 7
        engine = create_engine(normalize_url(url))
        with engine.connect() as db:
            held = db.execute(text("SELECT count(*) FROM running_slots")).scalar()
        assert held == 1
        with serving(second_folder, "--db", url, "--base-size", "256"):
            with engine.connect() as db:  # the second server started: the first's slot is still held...
                slots = db.execute(text("SELECT count(*) FROM running_slots")).scalar()
            states = {api.get(f"/api/images/{image['imageId']}").json()["generationStatus"] for image in running}
            # ...unless its 30 s ran out first on a loaded machine (a slot is given back in the transaction that
            # settles its images: read after it, the images say which; recovery would have FAILED them)
            assert slots == 1 or states == {"COMPLETED"}, (slots, states)
            assert httpx.get(f"{first.url}/sandbox/faults", verify=TLS, timeout=120).json() == faults
            deadline = time.monotonic() + 120
            states: set[str] = set()
            while states != {"COMPLETED"}:
                states = {api.get(f"/api/images/{image['imageId']}").json()["generationStatus"] for image in running}
                assert "FAILED" not in states, states
                assert time.monotonic() < deadline, f"the images never finished: {states}"
                time.sleep(0.2)  # polling the first server's work: nothing to wait on
        assert balance(api) == before - 2 * style["creditCost"]  # paid once, for two images made
        engine.dispose()
