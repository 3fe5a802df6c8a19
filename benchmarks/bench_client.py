"""Client overhead, measured side by side in one run.

1. Per-call time of ``ik.me()`` against a raw httpx GET of the same endpoint on the same embedded
   sandbox (same process, same keep-alive connection reuse), interleaved in rounds so drift hits
   both equally. Goal: ratio <= 1.3.
2. ``import imagekit`` time in a fresh interpreter (median of several, the contenders interleaved),
   next to the interpreter alone and httpx plus pydantic's BaseModel (the floor imagekit builds
   on). Goal: at most 50 ms over the floor. The models, ledger and workflows load on first use, so
   ``import imagekit`` plus the models a first response needs is printed too: the cost moved, not
   hidden. ``python -X importtime -c "import imagekit"`` shows where the rest goes.

Run: ``.venv/bin/python benchmarks/bench_client.py [--calls 300] [--rounds 5] [--imports-only]``
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
IMPORT_GOAL_MS = 50.0
IMPORTS = {
    "python -c pass": "pass",
    "httpx + pydantic models": "import httpx; from pydantic import BaseModel, Field",
    "import imagekit": "import imagekit",
    "... + the models (first response)": "import imagekit.models; imagekit.models.User; imagekit.models.CreateResponse",
}


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


def import_times(runs: int) -> dict[str, float]:
    """Median wall time of a fresh interpreter running each of ``IMPORTS``, interleaved run by run
    so that a busy machine slows every contender alike."""
    times: dict[str, list[float]] = {name: [] for name in IMPORTS}
    for _ in range(runs):
        for name, code in IMPORTS.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}


def print_imports(runs: int) -> bool:
    """Print the import times; whether ``import imagekit`` is within the goal."""
    medians = import_times(runs)
    floor, ours = medians["httpx + pydantic models"], medians["import imagekit"]
    print(f"import time (median of {runs} fresh interpreters each, interleaved)")
    for name, seconds in medians.items():
        print(f"  {name:34s} {seconds * 1e3:8.0f} ms")
    print(f"  import imagekit over httpx+pydantic: {(ours - floor) * 1e3:+.0f} ms  (goal <= +{IMPORT_GOAL_MS:.0f} ms)")
    return (ours - floor) * 1e3 <= IMPORT_GOAL_MS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per round and contender")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--imports", type=int, default=7, help="fresh interpreters per import measurement")
    parser.add_argument("--imports-only", action="store_true", help="measure import time only")
    args = parser.parse_args()
    if args.imports_only:
        return 0 if print_imports(args.imports) else 1

    with tempfile.TemporaryDirectory() as data, EmbeddedSandbox(Path(data), base_size=256) as box:
        raw, raw_json, ik = sync_pair(box.url, box.api_key, args.calls, args.rounds)
        araw, aik = async_pair(box.url, box.api_key, args.calls, args.rounds)

    print(f"per call, GET /api/users/me (median of {args.rounds} rounds x {args.calls} calls, embedded sandbox)")
    print(f"  raw httpx GET            {raw * 1e6:8.0f} us")
    print(f"  raw httpx GET + .json()  {raw_json * 1e6:8.0f} us")
    print(f"  ik.me()                  {ik * 1e6:8.0f} us   ratio vs raw GET {ik / raw:.2f}x  (goal <= {GOAL}x)")
    print(f"  raw httpx async GET      {araw * 1e6:8.0f} us")
    print(f"  await aik.me()           {aik * 1e6:8.0f} us   ratio vs raw async GET {aik / araw:.2f}x")
    imports_ok = print_imports(args.imports)
    return 0 if ik / raw <= GOAL and imports_ok else 1


if __name__ == "__main__":
    sys.exit(main())
