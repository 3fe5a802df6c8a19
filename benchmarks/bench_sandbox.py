"""Sandbox create overhead, measured side by side in one run.

Create latency: ``POST /api/images/create`` with count=4 at 1024x1024 (square, style mode, sync)
against an embedded sandbox, median and p90 over ``--creates`` requests, next to the bare
``ProceduralEngine`` drawing the same four images (same prompt, look and seeds). The ratio is what
HTTP, the database, file writes and the inline JPEG/base64 encoding add to the engine. Requests and
bare runs alternate, so drift on the machine hits both equally.

The request path (``GET /api/users/me`` beside bare Starlette) is ``bench_request_path.py``.

Run: ``.venv/bin/python benchmarks/bench_sandbox.py [--creates 10]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import httpx

from imagekit.sandbox import EmbeddedSandbox

PROMPT = "a red fox in a snowy forest at dawn, soft light"
COUNT = 4
SIDE = 1024


def p90(values: list[float]) -> float:
    """The 90th percentile, interpolated between the nearest two values."""
    return statistics.quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


def engine_time(look: str, first_seed: int) -> float:
    """Seconds for the bare engine to draw the ``COUNT`` images a create with ``first_seed`` draws."""
    from imagekit.sandbox.engines.base import GenerationRequest
    from imagekit.sandbox.engines.generate import ProceduralEngine

    engine = ProceduralEngine()
    started = time.perf_counter()
    for i in range(COUNT):
        engine.generate(GenerationRequest(prompt=PROMPT, width=SIDE, height=SIDE, seed=first_seed + i, style=look))
    return time.perf_counter() - started


def create_latency(requests: int) -> tuple[list[float], list[float], str]:
    """(create seconds, engine seconds, look), one pair per request, alternating."""
    with EmbeddedSandbox() as box:
        key = box.add_user("bench@imagekit.local", "pro")
        with httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=120) as client:
            style = client.get("/api/users/me/styles").raise_for_status().json()[0]
            look = style["main"]

            def create(first_seed: int) -> float:
                body = {"prompt": PROMPT, "styleId": style["styleId"], "count": COUNT, "seed": first_seed}
                started = time.perf_counter()
                response = client.post("/api/images/create", json=body).raise_for_status()
                elapsed = time.perf_counter() - started
                images = response.json()["images"]
                assert [i["generationStatus"] for i in images] == ["COMPLETED"] * COUNT, images
                assert images[0]["resolution"] == f"{SIDE}x{SIDE}", images[0]["resolution"]
                return elapsed

            create(10_000), engine_time(look, 10_000)  # warm: imports, caches, connection
            creates, engines = [], []
            for n in range(requests):
                creates.append(create(n * COUNT))
                engines.append(engine_time(look, n * COUNT))
    return creates, engines, look


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--creates", type=int, default=10, help="create requests (and bare engine runs)")
    args = parser.parse_args()

    creates, engines, look = create_latency(args.creates)

    print(f"sandbox benchmark  ({os.cpu_count()} CPUs, Python {platform.python_version()})")
    print()
    print(f"POST /api/images/create  count={COUNT}, {SIDE}x{SIDE}, style mode ({look}), sync; "
          f"{len(creates)} requests")
    print(f"  {'':32}{'median':>10}{'p90':>10}")
    print(f"  {'create over HTTP':32}{statistics.median(creates):9.3f}s{p90(creates):9.3f}s")
    print(f"  {'bare engine, same 4 images':32}{statistics.median(engines):9.3f}s{p90(engines):9.3f}s")
    ratio = statistics.median(creates) / statistics.median(engines)
    print(f"  {'ratio (create / engine)':32}{ratio:9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
