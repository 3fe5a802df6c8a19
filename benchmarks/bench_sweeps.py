"""One sweep drained by 1, 2 and 4 processes (one key each), against the bound, measured in one run.

A sandbox with ``--latency`` seconds per generation runs in this process; each worker process runs
the same named sweep with a journal in a throwaway PostgreSQL cluster, on a key of its own (a
standard plan: simultaneousLimit 2). The bound is keys x limit / latency rows a second: no client
can beat it, since every generation holds one of its account's slots for at least the latency.
Printed side by side: rows a second for each number of processes, the bound, their ratio, and the
speed-up over one process. Goal: with N processes, at least 0.8 of the bound (N x one process),
where the cores allow it: the sandbox renders in this process and every worker is a Python process,
so on a 2-core machine 4 workers are limited by the CPU, not by the sweep's coordination (seen
2026-11-26 with other work running: 1 process 0.82 of its bound, 2 processes 0.70, 4 processes
0.43, 32 rows each).

Run: ``.venv/bin/python benchmarks/bench_sweeps.py [--rows 48] [--latency 0.5]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from imagekit.sandbox import EmbeddedSandbox  # noqa: E402
from tests.postgres import PostgresServer  # noqa: E402
from tests.utils.service import public_style  # noqa: E402
from tests.workflows.test_sweeps import finish, start  # noqa: E402

LIMIT = 2
"""simultaneousLimit of the standard plan each worker's key is on."""


def key_of(box: EmbeddedSandbox, n: int) -> str:
    answer = httpx.post(f"{box.url}/sandbox/users", json={"email": f"bench{n}-{time.time_ns()}@test.local",
                                                            "plan": "standard"})
    answer.raise_for_status()
    return str(answer.json()["apiKey"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=48, help="rows in each sweep")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds each generation takes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, PostgresServer() as cluster, \
            EmbeddedSandbox(Path(tmp) / "box", latency=args.latency, base_size=64) as box:
        print(f"sweep of {args.rows} rows, {args.latency:g} s a generation, {LIMIT} at once per key; "
              f"{os.cpu_count()} cores; public style {public_style(box)}")
        print(f"{'processes':>9} {'rows/s':>8} {'bound':>8} {'of bound':>9} {'speed-up':>9}")
        one = None
        for processes in (1, 2, 4):
            folder, journal = Path(tmp) / f"run-{processes}", cluster.new_database()
            started = [start(box, folder, n, [key_of(box, n)], journal, rows=args.rows, peers=processes)
                       for n in range(processes)]
            reports = finish([process for process, _ in started], [report for _, report in started])
            rate = args.rows / (max(r["ended"] for r in reports) - min(r["started"] for r in reports))
            bound = processes * LIMIT / args.latency
            one = one or rate
            print(f"{processes:>9} {rate:>8.2f} {bound:>8.2f} {rate / bound:>9.2f} {rate / one:>8.2f}x")


if __name__ == "__main__":
    main()
