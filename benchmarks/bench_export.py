"""Peak memory of a 1,000-image batch leaving the notebook, next to the 300 MB bound (issue 23).

A served sandbox (1024 px images) and moto's S3 server, each a process of its own. One child process
runs the batch with ``out_dir`` in S3 (every image uploaded as its row is done); then one child per
phase loads the finished batch from its journal and exports it: as an imagefolder and as Parquet,
to a local folder and to S3. Each child reports the kernel's high-water mark of its resident memory
(VmHWM) and the bytes it moved, printed side by side with the bound, and beside a child that only
loads the batch (what any process holding it costs before it moves a byte).

Run: ``.venv/bin/python benchmarks/bench_export.py [--images 1000] [--size 1024]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

BOUND = 300 * 1024**2
MB = 1024**2
PHASES = {  # phase -> (what it does, export destination and format, or None)
    "load": ("load the finished batch, export nothing", None),
    "imagefolder-local": ("export imagefolder to a local folder", ("{tmp}/export/folder", "imagefolder")),
    "parquet-local": ("export parquet to a local file", ("{tmp}/export/batch.parquet", "parquet")),
    "imagefolder-s3": ("export imagefolder to S3", ("s3://bench/export/folder", "imagefolder")),
    "parquet-s3": ("export parquet to S3", ("s3://bench/export/batch.parquet", "parquet")),
}


def high_water() -> int:
    """This process's peak resident memory so far (VmHWM), in bytes."""
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) * 1024


def rows(images: int) -> list[dict]:
    return [{"prompt": f"a lighthouse at dusk, study {n}", "ratio": ["1:1", "16:9", "3:4", "4:3"][n % 4]}
            for n in range(images)]


def child(phase: str, url: str, key: str, tmp: str, images: int) -> None:
    """One phase, in a process of its own: prints its peak memory and the bytes it moved as JSON."""
    import imagekit

    with imagekit.Client(url, key, ledger=f"{tmp}/ledger.sqlite") as ik:
        batch = ik.batch(rows(images), style=ik.styles()[0])
        started = time.perf_counter()
        # The "run" phase makes the images and uploads them; the others find them done in the journal.
        batch.run(out_dir="s3://bench/run", journal=f"{tmp}/journal.sqlite", progress=False)
        frame = batch.to_pandas()
        target = PHASES.get(phase, ("", None))[1]
        if target is not None:
            export = batch.export(target[0].format(tmp=tmp), format=target[1], progress=False)
            assert export.images == images, export
        seconds = time.perf_counter() - started
    done = int((frame["status"] == "COMPLETED").sum())
    print(json.dumps({"peak": high_water(), "seconds": seconds, "images": done}))


def run_phase(phase: str, url: str, key: str, tmp: str, images: int, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", phase, url, key, tmp, str(images)],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"{phase} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def start(command: list[str], log: Path, pattern: str) -> tuple[subprocess.Popen[bytes], str]:
    """A server process; returns it and the URL its log names once it serves."""
    with open(log, "wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not (found := re.search(pattern, log.read_text(errors="replace"))):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{command[0]} did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.1)
    return process, found.group(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--size", type=int, default=1024, help="long side of the generated images (px)")
    options = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        data = Path(tmp) / "sandbox"
        subprocess.run([bin_dir / "imagekit", "sandbox", "init", "--data", str(data)], check=True, capture_output=True)
        key = subprocess.run([bin_dir / "imagekit", "sandbox", "user", "add", "--data", str(data), "--email",
                              "bench@example.com", "--plan", "pro"], check=True, capture_output=True,
                             text=True).stdout.strip().splitlines()[-1]
        sandbox, url = start([str(bin_dir / "imagekit"), "sandbox", "serve", "--data", str(data), "--port", "0",
                              "--base-size", str(options.size), "--log-level", "warning"],
                             Path(tmp) / "sandbox.log", r"Serving the imagekit sandbox on (http://127\.0\.0\.1:\d+)")
        moto, endpoint = start([str(bin_dir / "moto_server"), "-H", "127.0.0.1", "-p", "0"], Path(tmp) / "moto.log",
                               r"Running on (http://127\.0\.0\.1:\d+)")
        env = {**os.environ, "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
        try:
            httpx.get(url + "/openapi.json", timeout=30).raise_for_status()
            figures = {"run": run_phase("run", url, key, tmp, options.images, env)}
            for phase in PHASES:
                figures[phase] = run_phase(phase, url, key, tmp, options.images, env)
            stored = _stored_bytes(endpoint, tmp)
        finally:
            moto.terminate()
            sandbox.terminate()
            moto.wait(30)
            sandbox.wait(30)
    report(figures, stored, options)


def _stored_bytes(endpoint: str, tmp: str) -> dict[str, int]:
    import s3fs

    fs = s3fs.S3FileSystem(endpoint_url=endpoint, key="testing", secret="testing", skip_instance_cache=True)
    local = Path(tmp) / "export"
    return {"run": fs.du("bench/run"), "imagefolder": sum(p.stat().st_size for p in (local / "folder").iterdir()),
            "parquet": (local / "batch.parquet").stat().st_size}


def report(figures: dict[str, dict], stored: dict[str, int], options: argparse.Namespace) -> None:
    print(f"A batch of {options.images} images ({options.size} px PNG, {stored['run'] / MB:.0f} MB in all), "
          "each phase in a process of its own")
    print(f"  {'phase':<42} {'images':>6} {'data MB':>8} {'peak RSS MB':>11} {'bound MB':>8} {'ratio':>6} {'s':>6}")
    moved = {"run": stored["run"], "imagefolder-local": stored["imagefolder"], "parquet-local": stored["parquet"],
             "imagefolder-s3": stored["imagefolder"], "parquet-s3": stored["parquet"], "load": 0}
    described = {"run": "run with out_dir in S3 (create, download, upload)", **{p: d for p, (d, _) in PHASES.items()}}
    for phase, figure in figures.items():
        print(f"  {described[phase]:<42} {figure['images']:>6} {moved[phase] / MB:>8.0f} {figure['peak'] / MB:>11.0f} "
              f"{BOUND / MB:>8.0f} {figure['peak'] / BOUND:>6.2f} {figure['seconds']:>6.1f}")
    worst = max(figure["peak"] for phase, figure in figures.items() if phase != "run")
    print(f"  highest export peak {worst / MB:.0f} MB, {worst / BOUND:.2f} of the bound (goal <= 1.00); "
          f"an export holding the images in memory would need {stored['imagefolder'] / MB:.0f} MB for them alone")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
    else:
        main()
