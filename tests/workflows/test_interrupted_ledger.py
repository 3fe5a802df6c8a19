"""The ledger always settles: however a batch run is cut short (here two Ctrl+C 0.1 to 1 s apart,
at many points of real runs in subprocesses against a served sandbox with latency), the next
reconciliation gives every create whose answer was lost what the balance says it cost, and the
ledger's total equals what the balance fell by, every time."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import imagekit
from tests.helpers import PATIENT_RETRIES, balance, control
from tests.utils.service import public_style
from tests.utils.users import make_user

ROOT = Path(__file__).resolve().parents[2]
INTERRUPTIONS = 10  # per sandbox face: 20 in all, as issue 47 asks (each is a process start, ~4 s here)


def _settled_total(box, key: str) -> float:
    """What ``imagekit usage`` would show: the ledger's total, once reconciled against a fresh reading."""
    with imagekit.Client(box.url, key, retry_policy=PATIENT_RETRIES) as ik:
        ik.me()  # a balance reading (and whose key it is)
        assert ik.ledger is not None
        ik.ledger.reconcile()
        return ik.ledger.total()


def _shown(box, key: str) -> str:
    """The ledger's entries, one line each: what a failure needs to be understood."""
    with imagekit.Client(box.url, key, retry_policy=PATIENT_RETRIES) as ik:
        assert ik.ledger is not None
        return "\n".join(f"{e.seq} {e.time} {e.operation} {e.status} {e.group_id} {e.image_ids} {e.credits} "
                         f"{e.source} bal={e.balance} {e.error}" for e in ik.ledger.entries(readings=True))


def _settled(box, key: str, before: float) -> tuple[float, float]:
    """The settled ledger's total and what the balance fell by, read once the balance holds still: a
    create the killed process sent may still be charged by the service after the process is gone
    (the balance read before the reconciliation's own reading would then miss it)."""
    for _ in range(40):
        first = balance(box, key)
        total = _settled_total(box, key)
        last = balance(box, key)
        if first == last:
            return total, before - last
        time.sleep(0.5)
    raise AssertionError(f"the balance kept moving after the run ended: {first} then {last}")


@pytest.mark.slow(52)
def test_two_ctrl_c_at_any_point_leave_a_ledger_that_settles_to_the_balance(box, tmp_path):
    user_id, key = make_user(box, "pro")
    style, before = public_style(box), balance(box, key)
    journal = str(tmp_path / "journal.sqlite")
    args = [sys.executable, "-m", "tests.workflows.interrupt_worker", box.url, key, str(style), "30", journal]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the default ledger, under the test's IMAGEKIT_HOME
    chance = random.Random(52)
    control(box, "POST", "faults", {"latency": 0.2})  # every request slower: creates are in flight when cut
    for attempt in range(INTERRUPTIONS):
        run = subprocess.Popen(args, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert run.stdout is not None and run.stdout.readline() == "started\n"
            time.sleep(chance.uniform(0.6, 2.0))
            run.send_signal(signal.SIGINT)
            time.sleep(chance.uniform(0.1, 1.0))
            run.send_signal(signal.SIGINT)
            try:
                run.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                run.send_signal(signal.SIGUSR1)  # its threads' stacks, on its stderr
                time.sleep(2)
                run.kill()
                raise AssertionError(f"two Ctrl+C did not end the run:\n{run.communicate()[1]}") from None
        finally:
            if run.poll() is None:
                run.kill()
        total, spent = _settled(box, key, before)
        assert total == pytest.approx(spent), f"after interruption {attempt + 1}: {spent} spent\n{_shown(box, key)}"
    control(box, "DELETE", "faults")
    finished = subprocess.run(args, cwd=ROOT, env=env, text=True, capture_output=True, timeout=300)
    assert finished.returncode == 0 and finished.stdout.endswith("finished\n"), finished.stderr
    total, spent = _settled(box, key, before)
    assert total == pytest.approx(spent)
