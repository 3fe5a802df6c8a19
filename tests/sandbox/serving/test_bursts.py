"""Bursts of concurrent requests right after start and right after a UTC day turn (when every user's
first request applies the daily grant, a write): no request waits on a second database connection."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest

from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import TLS, on_both_databases
from tests.utils.users import make_user

pytestmark = on_both_databases

BURST = 200
PATHS = ("/api/users/me", "/api/users/me/usage", "/api/users/me/styles", "/api/users/me/collectionCount")


async def burst(url: str, keys: list[str]) -> Counter:
    """``BURST`` requests at once, spread over the users and the read endpoints; status counts."""
    limits = httpx.Limits(max_connections=BURST, max_keepalive_connections=BURST)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits, verify=TLS) as client:
        responses = await asyncio.gather(*(
            client.get(PATHS[i % len(PATHS)], headers={"X-Api-Key": keys[i % len(keys)]}) for i in range(BURST)))
    return Counter(response.status_code for response in responses)


@pytest.mark.slow(12)
def test_bursts_after_start_and_after_a_day_turn_answer_without_a_500(tmp_path, new_database):
    url = new_database()
    with EmbeddedSandbox(tmp_path / "sandbox", database_url=url) as box:
        keys = [make_user(box, plan)[1] for plan in ("free", "standard", "pro", "enterprise") * 10]
        assert asyncio.run(burst(box.url, keys)) == Counter({200: BURST})
        httpx.post(f"{box.url}/sandbox/clock/advance", json={"seconds": 86400}, verify=TLS, timeout=120).raise_for_status()
        assert asyncio.run(burst(box.url, keys)) == Counter({200: BURST})
    with EmbeddedSandbox(tmp_path / "sandbox", database_url=url) as box:  # a restart: cold caches, same users
        httpx.post(f"{box.url}/sandbox/clock/advance", json={"seconds": 86400}, verify=TLS, timeout=120).raise_for_status()
        assert asyncio.run(burst(box.url, keys)) == Counter({200: BURST})
