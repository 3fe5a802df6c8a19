"""The CPU the suite records per test (``tests/cpu.py``) counts what the test's processes spend while
they still run, and counts it once when they end."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.cpu import cpu_seconds

BURN = 0.6
"""CPU-seconds each process spends, by its own clock: the same however busy the machine is."""

CODE = textwrap.dedent(f"""
    import subprocess, sys, time
    while time.process_time() < {BURN}:
        pass
    below = None
    if sys.argv[1:] == ["with-a-child"]:  # a grandchild of the test's, burning as much
        below = subprocess.Popen([sys.executable, "-c", "CODE = " + repr(CODE) + "\\n" + CODE],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        below.stdout.readline()
    print("burnt", flush=True)
    sys.stdin.read()  # live until the test closes our stdin
    if below:
        below.stdin.close()
        below.wait()
""")


def test_live_descendants_count_as_they_run_and_once_when_they_end():
    before = cpu_seconds()
    process = subprocess.Popen([sys.executable, "-c", f"CODE = {CODE!r}\n" + CODE, "with-a-child"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    assert process.stdout.readline() == "burnt\n"
    running = cpu_seconds() - before
    assert 2 * BURN * 0.9 <= running < 2 * BURN + 1.5, running  # both, though neither has ended

    process.stdin.close()
    process.wait()
    ended = cpu_seconds() - before
    assert running - 0.05 <= ended < running + 1.0, (running, ended)  # reaped: moved, not added again
