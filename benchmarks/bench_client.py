"""Client overhead, measured side by side in one run.

1. Per-call time of ``ik.me()`` against a raw httpx GET of the same endpoint on the same embedded
   sandbox (same process, same keep-alive connection reuse), interleaved in rounds so drift hits
   both equally. Goal: ratio <= 1.3.
2. ``import imagekit`` time in a fresh interpreter (median of several), next to the interpreter
   alone and httpx plus pydantic's BaseModel (the floor imagekit builds on).

Run: ``.venv/bin/python benchmarks/bench_client.py [--calls 300] [--rounds 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

import imagekit
from imagekit.sandbox import EmbeddedSandbox

ROOT = Path(__file__).resolve().parents[1]
GOAL = 1.3


def per_call(fn, calls: int) -> float:
    """Median seconds per call over ``calls`` calls (after they are warm)."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def sync_pair(url: str, key: str, calls: int, rounds: int) -> tuple[float, float, float]:
    with imagekit.Client(url, key) as ik, httpx.Client(base_url=url, headers={"X-Api-Key": key}) as raw:
        contenders = {
            "raw": lambda: raw.get("/api/users/me").raise_for_status(),
            "raw+json": lambda: raw.get("/api/users/me").json(),
            "ik": ik.me,
        }
        for fn in contenders.values():
            per_call(fn, 30)  # warm: connection, schema build, caches
        results = {name: [] for name in contenders}
        for _ in range(rounds):
            for name, fn in contenders.items():
                results[name].append(per_call(fn, calls))
    return tuple(statistics.median(results[name]) for name in ("raw", "raw+json", "ik"))


def async_pair(url: str, key: str, calls: int, rounds: int) -> tuple[float, float]:
    async def measure(fn) -> float:
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            await fn()
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    async def main() -> tuple[float, float]:
        async with imagekit.AsyncClient(url, key) as ik, httpx.AsyncClient(base_url=url, headers={"X-Api-Key": key}) as raw:
            async def raw_get():
                (await raw.get("/api/users/me")).raise_for_status()

            for fn in (raw_get, ik.me):
                for _ in range(30):
                    await fn()
            raw_times, ik_times = [], []
            for _ in range(rounds):
                raw_times.append(await measure(raw_get))
                ik_times.append(await measure(ik.me))
            return statistics.median(raw_times), statistics.median(ik_times)

    return asyncio.run(main())


def import_time(code: str, runs: int) -> float:
    """Median wall time of a fresh interpreter running ``code``."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per round and contender")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--imports", type=int, default=7, help="fresh interpreters per import measurement")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as data, EmbeddedSandbox(Path(data), base_size=256) as box:
        raw, raw_json, ik = sync_pair(box.url, box.api_key, args.calls, args.rounds)
        araw, aik = async_pair(box.url, box.api_key, args.calls, args.rounds)

    bare = import_time("pass", args.imports)
    floor = import_time("import httpx; from pydantic import BaseModel, Field", args.imports)
    ours = import_time("import imagekit", args.imports)

    print(f"per call, GET /api/users/me (median of {args.rounds} rounds x {args.calls} calls, embedded sandbox)")
    print(f"  raw httpx GET            {raw * 1e6:8.0f} us")
    print(f"  raw httpx GET + .json()  {raw_json * 1e6:8.0f} us")
    print(f"  ik.me()                  {ik * 1e6:8.0f} us   ratio vs raw GET {ik / raw:.2f}x  (goal <= {GOAL}x)")
    print(f"  raw httpx async GET      {araw * 1e6:8.0f} us")
    print(f"  await aik.me()           {aik * 1e6:8.0f} us   ratio vs raw async GET {aik / araw:.2f}x")
    print(f"import time (median of {args.imports} fresh interpreters)")
    print(f"  python -c pass           {bare * 1e3:8.0f} ms")
    print(f"  httpx + pydantic models  {floor * 1e3:8.0f} ms")
    print(f"  import imagekit          {ours * 1e3:8.0f} ms   (+{(ours - floor) * 1e3:.0f} ms over httpx+pydantic)")
    return 0 if ik / raw <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
