"""One process of a shared sweep, for the tests and the benchmark:

    python -m tests.workflows.sweep_worker SPEC_JSON

SPEC holds base_url, keys (this process's API keys), journal (a PostgreSQL URL), name, rows (how
many), style, lease (seconds), ledger (this process's ledger file), report (where to write when
its run started and ended, what it spent, why it stopped and how many rows it lost to another, as JSON) and, optionally, barrier (a
folder) and peers (how many processes): the run starts once every peer is ready, so a slow start
of Python does not count as the sweep's time.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import imagekit

RETRIES = imagekit.RetryPolicy(max_retries=4, backoff_base=0.01, backoff_cap=0.05)


def sweep_rows(count: int) -> list[str]:
    """The sweep's prompts (every process brings the same rows)."""
    return [f"a lighthouse, take {n}" for n in range(count)]


def main(spec: dict) -> None:
    keys = spec["keys"]
    with imagekit.Client(spec["base_url"], keys[0], ledger=spec["ledger"], retry_policy=RETRIES) as ik:
        batch = ik.batch(sweep_rows(spec["rows"]), name=spec["name"], keys=keys, style=spec["style"])
        if spec.get("barrier"):
            wait_for_peers(Path(spec["barrier"]), spec["peers"])
        started = time.time()
        batch.run(journal=spec["journal"], lease=spec["lease"], progress=False)
        report = {"started": started, "ended": time.time(), "spent": batch.spent, "stopped": batch.stopped,
                  "lost": len(batch.lost)}
    with open(spec["report"], "w") as out:
        json.dump(report, out)


def wait_for_peers(folder: Path, peers: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"ready-{os.getpid()}").touch()
    while len(list(folder.glob("ready-*"))) < peers:
        time.sleep(0.01)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
