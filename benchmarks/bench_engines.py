"""A batch run locally, on a Dask cluster (a scheduler and 4 worker processes) and on a local Ray,
against the bound, measured side by side in one run.

A sandbox with ``--latency`` seconds per generation runs in this process; a pro account
(simultaneousLimit 4) runs the same ``--rows`` rows twice, each time as a fresh user: here, then
with its requests made by the cluster's tasks, then by Ray's (``engine=``). The bound is limit / latency rows a
second: every generation holds one of the account's slots for at least the latency. Printed side
by side: rows a second, the bound, their ratio, and the engine's overhead per row (its run's time
over the local run's, per row, times the limit: what each row's requests cost on their way through
the cluster). Ray starts its worker processes as tasks first need them: a run of 20 rows before the
timed one starts them (its time is printed). Goal (issue 50): on the engine, at least 0.9 of the bound.

Run: ``.venv/bin/python benchmarks/bench_engines.py [--rows 200] [--latency 0.5] [--workers 4] [--no-ray]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import imagekit  # noqa: E402
from imagekit.sandbox import EmbeddedSandbox  # noqa: E402
from tests.clusters import DaskCluster, local_ray  # noqa: E402
from tests.utils.service import public_style  # noqa: E402
from tests.utils.users import make_user  # noqa: E402

LIMIT = 4
"""simultaneousLimit of the pro plan."""


def timed(box: EmbeddedSandbox, rows: int, folder: Path, **engine: object) -> float:
    """Seconds one fresh pro user's batch of ``rows`` rows takes (every row done, or it fails)."""
    folder.mkdir()
    _, key = make_user(box, "pro")
    with imagekit.Client(box.url, key, ledger=str(folder / "ledger.sqlite")) as ik:
        batch = ik.batch([f"a lighthouse, take {n}" for n in range(rows)], style=public_style(box))
        started = time.perf_counter()
        batch.run(progress=False, journal=folder / "journal.sqlite", **engine)
        took = time.perf_counter() - started
    done = sum(entry.status == "done" for entry in batch.entries.values())
    assert done == rows, f"{done} of {rows} rows done"
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200, help="rows in the batch")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds each generation takes")
    parser.add_argument("--workers", type=int, default=4, help="Dask worker processes")
    parser.add_argument("--no-ray", dest="ray", action="store_false", help="leave Ray out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, DaskCluster(workers=args.workers, threads=2) as cluster, \
            EmbeddedSandbox(Path(tmp) / "box", latency=args.latency, base_size=64) as box:
        bound = LIMIT / args.latency
        print(f"{args.rows} rows, {args.latency:g} s a generation, {LIMIT} at once; {args.workers} Dask workers; "
              f"{os.cpu_count()} cores")
        print(f"{'where':>6} {'rows/s':>8} {'bound':>8} {'of bound':>9} {'s a row':>8}")
        took = {"local": timed(box, args.rows, Path(tmp) / "local"),
                "dask": timed(box, args.rows, Path(tmp) / "dask", engine="dask", address=cluster.address)}
        if args.ray:
            cluster.stop()  # (its processes out of Ray's way)
            with local_ray(cpus=2):  # eight requests at once, as the Dask workers' threads
                warm = timed(box, 20, Path(tmp) / "ray-warm", engine="ray")  # Ray starts its workers on first use
                print(f"(Ray's first 20 rows, its worker processes starting: {warm:.1f} s)")
                took["ray"] = timed(box, args.rows, Path(tmp) / "ray", engine="ray")
        for name, seconds in took.items():
            rate = args.rows / seconds
            print(f"{name:>6} {rate:>8.2f} {bound:>8.2f} {rate / bound:>9.2f} {seconds / args.rows:>8.3f}")
        for name, seconds in took.items():
            if name != "local":
                extra = seconds - took["local"]
                print(f"{name} overhead: {extra / args.rows * LIMIT * 1000:.0f} ms a row "
                      f"({extra:+.1f} s over {args.rows} rows, {LIMIT} at once)")


if __name__ == "__main__":
    main()
