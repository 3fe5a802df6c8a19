"""Peak memory of a served sandbox under four parallel 8x downloads, next to the 1.5 GB bound.

A real ``imagekit sandbox serve`` subprocess (1024 px images) and a free-plan user (whose downloads
are watermarked, so every one is a rendered variant). Four different images are downloaded at 8x
(8192x8192) at once, streamed to nowhere, while the server's resident memory is sampled; the
kernel's own high-water mark (VmHWM) is read at the end. Then the same four again: now served from
the disk cache. Goal: peak RSS <= 1.5 GB (issue 12 measured 11.9 GB before renders were cached and
queued).

Run: ``.venv/bin/python benchmarks/bench_binary_memory.py``
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

BOUND = 1.5 * 1024**3
DOWNLOADS = 4


def cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "imagekit.cli", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def status(pid: int, field: str) -> int:
    """A memory figure of /proc/<pid>/status, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def round_of_downloads(url: str, key: str, ids: list[int], pid: int) -> tuple[float, int, int]:
    """Seconds, highest sampled RSS, bytes received, for ``DOWNLOADS`` parallel 8x downloads."""
    peak, stop = [status(pid, "VmRSS")], threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            peak.append(status(pid, "VmRSS"))

    def download(image_id: int) -> int:
        received = 0
        with httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=600) as http, \
                http.stream("GET", f"/api/images/{image_id}/binary", params={"scaleSize": "8x"}) as response:
            response.raise_for_status()
            for chunk in response.iter_bytes():
                received += len(chunk)
        return received

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.perf_counter()
    with ThreadPoolExecutor(DOWNLOADS) as pool:
        received = sum(pool.map(download, ids))
    seconds = time.perf_counter() - started
    stop.set()
    sampler.join()
    return seconds, max(peak), received


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        cli("sandbox", "init", "--data", str(data))
        key = cli("sandbox", "user", "add", "--data", str(data), "--email", "bench@x.io", "--plan", "free")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = subprocess.Popen([sys.executable, "-m", "imagekit.cli", "sandbox", "serve", "--data", str(data),
                                   "--port", str(port), "--log-level", "warning"], stdout=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            while True:
                try:
                    httpx.get(url + "/openapi.json")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)  # waiting for another process to open its port
            with httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=120) as api:
                style = api.get("/api/users/me/styles").json()[0]["styleId"]
                ids = [api.post("/api/images/create", json={"prompt": f"a kite {i}", "styleId": style})
                       .raise_for_status().json()["images"][0]["imageId"] for i in range(DOWNLOADS)]
            idle = status(server.pid, "VmRSS")
            cold = round_of_downloads(url, key, ids, server.pid)
            warm = round_of_downloads(url, key, ids, server.pid)
            high_water = status(server.pid, "VmHWM")
        finally:
            server.terminate()
            server.wait(30)
    gb = 1024**3
    print(f"{DOWNLOADS} parallel 8x downloads (8192x8192, watermarked png) from a served sandbox")
    print(f"  idle RSS                 {idle / gb:6.2f} GB")
    print(f"  rendering: peak RSS      {cold[1] / gb:6.2f} GB in {cold[0]:5.1f} s ({cold[2] / 1e6:.0f} MB sent)")
    print(f"  from cache: peak RSS     {warm[1] / gb:6.2f} GB in {warm[0]:5.1f} s ({warm[2] / 1e6:.0f} MB sent)")
    print(f"  high-water mark (VmHWM)  {high_water / gb:6.2f} GB   bound {BOUND / gb:.2f} GB   "
          f"ratio {high_water / BOUND:.2f} (goal <= 1.00)")


if __name__ == "__main__":
    main()
