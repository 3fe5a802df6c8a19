"""A batch run that the interruption tests stop with signals.

    python -m tests.workflows.interrupt_worker BASE_URL API_KEY STYLE ROWS JOURNAL

Runs ROWS one-image rows of STYLE with the journal JOURNAL and the default ledger (under
``IMAGEKIT_HOME``), printing ``started`` once the batch is about to run and ``finished`` at its end.
"""

from __future__ import annotations

import faulthandler
import signal
import sys

import imagekit
from tests.helpers import PATIENT_RETRIES


def main(argv: list[str]) -> int:
    url, key, style, rows, journal = argv
    faulthandler.register(signal.SIGUSR1)  # a run that does not end: the test asks where it waits
    with imagekit.Client(url, key, retry_policy=PATIENT_RETRIES) as ik:
        batch = ik.batch([f"interrupted {number}" for number in range(int(rows))], style=int(style))
        print("started", flush=True)
        batch.run(journal=journal, progress=False)
    print("finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
