"""Batch create: throughput against the plan's bound, and peak memory, measured in one run.

1. Throughput. ``imagekit sandbox serve --latency 0.25`` in a subprocess; a pro user
   (simultaneousLimit 4) runs a batch. The bound is simultaneousLimit / latency images a second
   (no client can beat it: every generation holds a slot for at least ``latency``). Printed side by
   side: the bound, the batch, and a naive client (threads doing blocking creates, one per slot).
   Goal: batch / bound >= 0.9, in both faces of the sandbox, printed side by side: with its
   extensions (image metadata shows group ids, so the batch sends creates side by side) and
   ``--spec-exact`` (the interface and nothing more: asynchronous creates one at a time, polled).
2. Memory. A 1,000-image batch saving every image to disk, the client alone in its own process
   (the sandbox in another, with 256 px images and no latency, so only the client's memory counts).
   Goal: peak RSS < 300 MB; the interpreter with imagekit imported is printed next to it.

Run: ``.venv/bin/python benchmarks/bench_workflows.py [--rows 120] [--images 1000] [--large 0]``
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
LATENCY = 0.25
THROUGHPUT_GOAL, MEMORY_GOAL_MB = 0.9, 300
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

CLIENT_MEMORY = """
import resource, sys, imagekit
url, key, out, images = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ik = imagekit.Client(url, key, ledger=out + "/ledger.sqlite")
idle = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
batch = ik.batch([f"memory test {i}" for i in range(images)], style=ik.styles()[0]).run(out_dir=out, progress=False)
done = int((batch.to_pandas()["file"].notna()).sum())
print(idle, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, done)
"""


def cli(*args: str) -> str:
    """Run ``imagekit ...``; return the last line of stdout (the API key, for init and user add)."""
    out = subprocess.run([sys.executable, "-m", "imagekit.cli", *args], env=ENV, cwd=ROOT, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def server(command: list[str], port: int):
    """A sandbox process, up until the block ends."""
    process = subprocess.Popen(command, env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(f"{url}/openapi.json", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(30)


def pro_user(data: Path) -> str:
    cli("sandbox", "init", "--data", str(data))
    return cli("sandbox", "user", "add", "--data", str(data), "--email", "bench@test.local", "--plan", "pro")


def serve(data: str, port: int, base_size: int, latency: float, *extra: str) -> list[str]:
    """The ``imagekit sandbox serve`` command line for a sandbox drawing ``base_size`` px images."""
    return [sys.executable, "-m", "imagekit.cli", "sandbox", "serve", "--data", data, "--port", str(port),
            "--latency", str(latency), "--base-size", str(base_size), "--log-level", "warning", *extra]


def throughput(rows: int, base_size: int, *extra: str) -> dict:
    """At 1024 px (as shipped) the sandbox's own drawing competes for the CPUs; smaller images show
    the client. Returns the rates (images/s) of the bound, the batch and a naive client."""
    import imagekit

    with tempfile.TemporaryDirectory() as tmp:
        key, port = pro_user(Path(tmp)), free_port()
        with server(serve(tmp, port, base_size, LATENCY, *extra), port) as url, \
                imagekit.Client(url, key, ledger=Path(tmp) / "ledger.sqlite") as ik:
            limit, style = ik.me().plan.simultaneous_limit, ik.styles()[0]
            ik.batch(["warm up"] * limit, style=style).run(progress=False)
            started = time.perf_counter()
            batch = ik.batch([f"throughput {i}" for i in range(rows)], style=style).run(progress=False)
            batch_rate = rows / (time.perf_counter() - started)

            def one(i: int) -> None:
                ik.create(f"naive {i}", style=style)

            started = time.perf_counter()
            with ThreadPoolExecutor(limit) as pool:
                list(pool.map(one, range(rows)))
            naive_rate = rows / (time.perf_counter() - started)
    return {"limit": limit, "bound": limit / LATENCY, "batch": batch_rate, "naive": naive_rate,
            "creates": "side by side" if batch.tagged else "one at a time"}


def throughput_table(rows: int, base_size: int) -> None:
    """Both faces of the sandbox, one after the other, printed side by side."""
    runs = {"extensions": throughput(rows, base_size), "spec-exact": throughput(rows, base_size, "--spec-exact")}
    first = runs["extensions"]
    print(f"throughput, {rows} images, simultaneousLimit {first['limit']}, latency {LATENCY}s, "
          f"imagekit sandbox serve --base-size {base_size} [--spec-exact]")
    print(f"  {'':34}{'extensions':>22}{'spec-exact':>22}")
    print(f"  {'bound (limit / latency)':34}" + "".join(f"{r['bound']:15.2f} img/s" for r in runs.values()))
    for name, label in (("batch", "ik.batch(...).run()"), ("naive", f"naive: {first['limit']} threads of create")):
        print(f"  {label:34}" + "".join(f"{r[name]:9.2f} ({r[name] / r['bound']:.2f})    " for r in runs.values()))
    verdicts = [f"{mode}: {r['batch'] / r['bound']:.2f} {'OK' if r['batch'] / r['bound'] >= THROUGHPUT_GOAL else 'MISSED'}"
                f" (creates {r['creates']})" for mode, r in runs.items()]
    print(f"  batch / bound, goal >= {THROUGHPUT_GOAL}: {'; '.join(verdicts)}")


def memory(images: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "sbx", Path(tmp) / "out"
        key, port = pro_user(data), free_port()
        with server(serve(str(data), port, 256, 0.0), port) as url:
            started = time.perf_counter()
            result = subprocess.run([sys.executable, "-c", CLIENT_MEMORY, url, key, str(out), str(images)],
                                    env=ENV, cwd=ROOT, check=True, capture_output=True, text=True)
            seconds = time.perf_counter() - started
    idle_kb, peak_kb, saved = (int(x) for x in result.stdout.split())
    peak = peak_kb / 1024
    print(f"memory, {images}-image batch saving to disk ({saved} files, {seconds:.1f}s)")
    print(f"  client with imagekit imported  {idle_kb / 1024:6.1f} MB")
    print(f"  client peak during the batch   {peak:6.1f} MB   goal < {MEMORY_GOAL_MB} MB  "
          f"{'OK' if peak < MEMORY_GOAL_MB else 'MISSED'}")


def _loadavg() -> str:
    """The 1, 5 and 15 minute load averages: other work on the machine skews every rate."""
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=120, help="images in the throughput batch")
    parser.add_argument("--images", type=int, default=1000, help="images in the memory batch")
    parser.add_argument("--large", type=int, default=1024, help="image size of the first throughput run (0: skip it)")
    parser.add_argument("--small", type=int, default=256, help="image size of the second throughput run")
    parser.add_argument("--only", choices=["throughput", "memory"], help="run one part only")
    args = parser.parse_args()
    if args.only != "memory":
        print(f"load average before: {_loadavg()}")
        if args.large:
            throughput_table(args.rows, args.large)
        throughput_table(args.rows, args.small)
        print(f"load average after: {_loadavg()}")
    if args.only != "throughput":
        memory(args.images)


if __name__ == "__main__":
    main()
