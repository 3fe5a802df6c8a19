"""One process of the fresh-home budget tests: plain tagged creates, each printed as it ends.

    python -m tests.ledger.budget_worker BASE_URL API_KEY STYLE CREATES BARRIER_DIR

It uses the default ledger (under ``IMAGEKIT_HOME``), waits for ``go`` in BARRIER_DIR (see
``team_worker``), then sends CREATES creates of one image, tagged ``experiment=cap``, one after
another. Each prints one line: ``made`` or ``refused: <the error's message>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import imagekit
from tests.helpers import PATIENT_RETRIES
from tests.ledger.team_worker import wait_for_go


def main(argv: list[str]) -> int:
    url, key, style, creates, barrier = argv
    with imagekit.Client(url, key, retry_policy=PATIENT_RETRIES) as ik, ik.tags(experiment="cap"):
        wait_for_go(Path(barrier))
        for number in range(int(creates)):
            try:
                ik.create(f"capped {number}", style=int(style), count=1)
            except imagekit.BudgetExceededError as exc:
                print(f"refused: {exc}", flush=True)
            else:
                print("made", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
