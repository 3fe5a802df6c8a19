"""``GET /api/users/me`` req/s of ``imagekit sandbox serve`` on SQLite (1 worker) and on PostgreSQL
(1 and 2 workers), measured side by side in one run.

Each configuration is a real ``serve`` subprocess on a free port (``--port 0``, read from its
``Serving ...`` line) over a fresh database; the PostgreSQL cluster is a throwaway one (the test
suite's, ``tests/postgres.py``). The load is ``CLIENTS`` threads, each with its own keep-alive
connection, for ``SECONDS``; every answer must be a 200, and with 2 workers both must have
answered (``--worker-header``). Keep-alive makes a lost TCP_NODELAY show: ~40 ms per request.

Run: ``.venv/bin/python benchmarks/bench_serve_workers.py``
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.postgres import PostgresServer  # noqa: E402

CLIENTS = 8
SECONDS = 8.0


def cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "imagekit.cli", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def load(url: str, key: str) -> tuple[float, Counter[str]]:
    """Requests per second over ``SECONDS``, and how many each worker answered."""
    served: Counter[str] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + SECONDS

    def client() -> None:
        mine: Counter[str] = Counter()
        with httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=30) as api:
            while time.monotonic() < deadline:
                answer = api.get("/api/users/me")
                assert answer.status_code == 200, answer.text
                mine[answer.headers.get("X-Sandbox-Worker", "one")] += 1
        with lock:
            served.update(mine)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(served.values()) / (time.monotonic() - started), served


def measure(db: str | None, workers: int) -> tuple[float, Counter[str]]:
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as folder:
        db_args = ["--db", db] if db else []
        key = cli("sandbox", "init", "--data", folder, *db_args)
        extra = ["--workers", str(workers), "--worker-header"] if workers > 1 else []
        server = subprocess.Popen([sys.executable, "-m", "imagekit.cli", "sandbox", "serve", "--data", folder,
                                   *db_args, *extra, "--port", "0", "--log-level", "warning"],
                                  stdout=subprocess.PIPE, text=True)
        try:
            line = server.stdout.readline()
            url = re.search(r"http://[\d.]+:\d+", line).group(0)
            with httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=120) as warm:  # workers start
                for _ in range(50):
                    warm.get("/api/users/me").raise_for_status()
            return load(url, key)
        finally:
            server.terminate()
            server.wait(60)


def main() -> None:
    postgres = PostgresServer().start()
    try:
        rows = [("SQLite, 1 worker", *measure(None, 1)),
                ("PostgreSQL, 1 worker", *measure(postgres.new_database(), 1)),
                ("PostgreSQL, 2 workers", *measure(postgres.new_database(), 2))]
    finally:
        postgres.stop()
    print(f"GET /api/users/me, {CLIENTS} keep-alive clients, {SECONDS:g} s each")
    for name, rate, served in rows:
        print(f"  {name:<24} {rate:8.0f} req/s   answered by: {sorted(served.values(), reverse=True)}")
    print(f"  PostgreSQL 2 workers / 1 worker: {rows[2][1] / rows[1][1]:.2f}x;"
          f" PostgreSQL / SQLite (1 worker): {rows[1][1] / rows[0][1]:.2f}x")
    assert len(rows[2][2]) == 2, "one worker answered everything"


if __name__ == "__main__":
    main()
