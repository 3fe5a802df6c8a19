"""A Ctrl+C at the two moments a blocking run hands over to its event loop's thread, the loop
starting and the loop being asked to stop, ends the process: it never waits for ever for a loop
nobody stops (found by the interrupted-ledger test under load, where a starved process met both).

The signal is sent by the process to itself at the moment named, so the moment is exact: once the
run's first new thread (the loop's) has started and the caller waits for its loop to say it runs;
and when the caller asks the loop's portal for its second task (the first is the run, the second
the stop)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import imagekit
from tests.helpers import balance
from tests.utils.users import make_user

ROOT = Path(__file__).resolve().parents[2]

_RUN = """
import os, signal, sys, threading, time
import imagekit

url, key, moment = sys.argv[1:]
asked = []
def waiting(frame):  # on a concurrent future (the loop's portal, which this thread has not made yet)
    while frame is not None and not (frame.f_code.co_name == "result" and "concurrent" in frame.f_code.co_filename):
        frame = frame.f_back
    return frame is not None
def started(frame, event, arg):  # the first function the run's first new thread (the loop's) runs
    sys.settrace(None)
    threading.settrace(None)
    while not waiting(sys._current_frames()[threading.main_thread().ident]):
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1.0)  # the main thread meets the signal while it waits for this thread's loop
def stopping(frame, event, arg):  # the blocking side asking the portal for its second task: the stop
    if event == "call" and frame.f_code.co_name == "start_task_soon":
        asked.append(1)
        if len(asked) == 2:
            sys.settrace(None)
            os.kill(os.getpid(), signal.SIGINT)
with imagekit.Client(url, key) as ik:
    batch = ik.batch(["a ctrl+c", "and another"], style=ik.styles()[0])
    if moment == "start":
        threading.settrace(started)
    else:
        sys.settrace(stopping)
    batch.run(progress=False)
print("not interrupted")
"""


@pytest.mark.slow(8)
@pytest.mark.parametrize("moment", ["start", "stop"])
def test_a_ctrl_c_as_the_run_starts_or_stops_ends_the_process(sandbox, moment, tmp_path):
    _, key = make_user(sandbox, "pro")
    before = balance(sandbox, key)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        run = subprocess.run([sys.executable, "-c", _RUN, sandbox.url, key, moment], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)  # without the fix: for ever
    except subprocess.TimeoutExpired:
        pytest.fail(f"a Ctrl+C as the run {'started' if moment == 'start' else 'stopped'} left it waiting for ever")
    assert run.returncode != 0 and run.stderr.rstrip().endswith("KeyboardInterrupt"), run.stderr
    assert "not interrupted" not in run.stdout
    spent = before - balance(sandbox, key)
    if moment == "start":
        assert spent == 0  # nothing was sent
    else:  # both rows made before the stop, and recorded
        with imagekit.Client(sandbox.url, key) as ik:  # the same IMAGEKIT_HOME (tests/workflows/conftest.py)
            assert spent > 0 and ik.ledger is not None and ik.ledger.total() == spent
