"""Sandbox server overhead, measured side by side in one run.

1. Create latency: ``POST /api/images/create`` with count=4 at 1024x1024 (square, style mode, sync)
   against an embedded sandbox, median and p90 over ``--creates`` requests, next to the bare
   ``ProceduralEngine`` drawing the same four images (same prompt, look and seeds). The ratio is
   what HTTP, the database, file writes and the inline JPEG/base64 encoding add to the engine.
   Requests and bare runs alternate, so drift on the machine hits both equally.
2. Throughput: ``GET /api/users/me`` requests per second next to a bare Starlette app whose one
   async endpoint returns the very same JSON document (captured from the sandbox). Each server runs
   in its own subprocess under uvicorn on 127.0.0.1 (same uvicorn settings), so the client loop
   (``--threads`` httpx keep-alive clients) does not compete with the server for one GIL. Rounds of
   ``--seconds`` each alternate A/B/A/B. The ratio is what FastAPI, authentication (a key lookup
   and a user load per request) and the view cost over HTTP + JSON alone. On a small machine
   the client shares the CPUs, so the bare rate is partly client-bound and the ratio is a lower bound.

Run: ``.venv/bin/python benchmarks/bench_sandbox.py [--creates 10] [--seconds 5] [--rounds 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from imagekit.sandbox import EmbeddedSandbox

PROMPT = "a red fox in a snowy forest at dawn, soft light"
COUNT = 4
SIDE = 1024


def p90(values: list[float]) -> float:
    """The 90th percentile, interpolated between the nearest two values."""
    return statistics.quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


# --- 1. create latency ------------------------------------------------------------------------


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


# --- 2. requests per second ---------------------------------------------------------------------


def serve(kind: str, document: str | None) -> None:
    """Subprocess mode: serve the sandbox or the bare app, print {url, key}, stop when stdin closes."""
    if kind == "sandbox":
        with EmbeddedSandbox() as box:
            print(json.dumps({"url": box.url, "key": box.api_key}), flush=True)
            sys.stdin.read()
        return
    import socket

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    body = json.loads(Path(document).read_text())

    async def me(request):
        return JSONResponse(body)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # as EmbeddedSandbox: Nagle off
    sock.bind(("127.0.0.1", 0))
    # The same uvicorn settings as EmbeddedSandbox.start().
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/api/users/me", me)]), log_level="warning",
                                           access_log=False, timeout_keep_alive=30, limit_concurrency=512))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.01)
    print(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}", "key": ""}), flush=True)
    sys.stdin.read()
    server.should_exit = True
    thread.join(timeout=10)


class Server:
    """A ``serve`` subprocess of this script; ``.url`` and ``.key`` once it listens."""

    def __init__(self, kind: str, document: str | None = None):
        args = [sys.executable, __file__, "--serve", kind] + ([document] if document else [])
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=30)
            raise RuntimeError(f"the {kind} server did not start (exit code {self.process.returncode})")
        ready = json.loads(line)
        self.url, self.key = ready["url"], ready["key"]

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def rate(url: str, key: str, seconds: float, threads: int) -> float:
    """Successful GET /api/users/me per second from ``threads`` keep-alive clients over ``seconds``."""
    done = [0] * threads
    deadline = time.perf_counter() + seconds

    def load(slot: int) -> None:
        with httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=30) as client:
            client.get("/api/users/me").raise_for_status()  # connect before the clock counts
            while time.perf_counter() < deadline:
                client.get("/api/users/me").raise_for_status()
                done[slot] += 1

    workers = [threading.Thread(target=load, args=(slot,)) for slot in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(done) / (time.perf_counter() - started)


def throughput(seconds: float, rounds: int, threads: int) -> tuple[list[float], list[float], int]:
    """(sandbox rates, bare rates, body bytes): ``rounds`` interleaved rounds of each."""
    with tempfile.TemporaryDirectory() as tmp, Server("sandbox") as sandbox:
        document = httpx.get(f"{sandbox.url}/api/users/me", headers={"X-Api-Key": sandbox.key}).raise_for_status()
        path = Path(tmp) / "me.json"
        path.write_bytes(document.content)
        with Server("bare", str(path)) as bare:
            rate(sandbox.url, sandbox.key, 1.0, threads), rate(bare.url, "", 1.0, threads)  # warm
            sandbox_rates, bare_rates = [], []
            for _ in range(rounds):
                sandbox_rates.append(rate(sandbox.url, sandbox.key, seconds, threads))
                bare_rates.append(rate(bare.url, "", seconds, threads))
    return sandbox_rates, bare_rates, len(document.content)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--creates", type=int, default=10, help="create requests (and bare engine runs)")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one throughput round")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved throughput rounds per server")
    parser.add_argument("--threads", type=int, default=4, help="client threads in the throughput loop")
    parser.add_argument("--serve", nargs="+", metavar=("KIND", "DOCUMENT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], args.serve[1] if len(args.serve) > 1 else None)
        return 0

    creates, engines, look = create_latency(args.creates)
    sandbox_rates, bare_rates, size = throughput(args.seconds, args.rounds, args.threads)

    print(f"sandbox benchmark  ({os.cpu_count()} CPUs, Python {platform.python_version()})")
    print()
    print(f"POST /api/images/create  count={COUNT}, {SIDE}x{SIDE}, style mode ({look}), sync; "
          f"{len(creates)} requests")
    print(f"  {'':32}{'median':>10}{'p90':>10}")
    print(f"  {'create over HTTP':32}{statistics.median(creates):9.3f}s{p90(creates):9.3f}s")
    print(f"  {'bare engine, same 4 images':32}{statistics.median(engines):9.3f}s{p90(engines):9.3f}s")
    ratio = statistics.median(creates) / statistics.median(engines)
    print(f"  {'ratio (create / engine)':32}{ratio:9.2f}x")
    print()
    print(f"GET /api/users/me  {args.threads} keep-alive clients, {args.rounds} x {args.seconds:g} s per server, "
          f"interleaved; {size} B body")
    print(f"  {'':32}{'req/s':>10}   rounds")
    for name, rates in (("sandbox /api/users/me", sandbox_rates), ("bare Starlette, same body", bare_rates)):
        print(f"  {name:32}{statistics.median(rates):10.0f}   {', '.join(f'{r:.0f}' for r in rates)}")
    print(f"  {'ratio (bare / sandbox)':32}{statistics.median(bare_rates) / statistics.median(sandbox_rates):9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
