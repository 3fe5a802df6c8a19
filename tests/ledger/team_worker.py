"""One teammate's process for the shared-ledger tests: a tagged batch, then a tagged edit chain.

    python -m tests.ledger.team_worker BASE_URL API_KEY LEDGER TAGS_JSON ROWS [BARRIER_DIR]

With BARRIER_DIR it says it is ready (a file ``ready-<pid>`` there) and starts when ``go`` appears,
so two workers really run at once. Its last line of stdout is why the batch stopped, or "finished".
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import imagekit
from tests.helpers import PATIENT_RETRIES


def wait_for_go(barrier: Path, seconds: float = 60.0) -> None:
    (barrier / f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + seconds
    while not (barrier / "go").exists():
        if time.monotonic() > deadline:
            raise SystemExit("no go signal")
        time.sleep(0.005)  # polling a file: the other side has no event to share with this process


def main(argv: list[str]) -> int:
    url, key, ledger, tags, rows = argv[:5]
    with imagekit.Client(url, key, ledger=ledger, retry_policy=PATIENT_RETRIES) as ik:
        style = ik.styles()[0]
        if len(argv) > 5:
            wait_for_go(Path(argv[5]))
        with ik.tags(json.loads(tags)):
            batch = ik.batch([f"prompt {i}" for i in range(int(rows))], style=style).run(progress=False)
            frame = batch.to_pandas()
            made = frame[frame["status"] == "COMPLETED"]["image_id"].dropna()
            if len(made):
                imagekit.chain().remove_bg().upsize().run(ik.image(int(made.iloc[0])))
    print(batch.stopped or "finished")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
