"""The example marimo notebook runs as a script against its own embedded sandbox, and passes marimo's
own check (the painter's interactive side is tested in tests/widgets/test_marimo_browser.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "marimo_painter.py"


@pytest.mark.slow(10)
def test_the_marimo_painter_notebook_runs_as_a_script(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY")}
    env["IMAGEKIT_HOME"] = str(tmp_path / "home")  # a fresh embedded sandbox
    run = subprocess.run([sys.executable, str(NOTEBOOK)], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    made, cleaned = run.stdout.splitlines()
    first = re.fullmatch(r"Image\(id=(\d+), status='COMPLETED', resolution='1024x576'\), (\d+) credits left", made)
    assert first, made
    second = re.fullmatch(r"cleaned up (\d+\.\d)% of image #(\d+): #(\d+), (\d+) credits; (\d+) credits left", cleaned)
    assert second, cleaned
    assert float(second[1]) > 0 and second[2] == first[1] and second[3] != first[1]
    assert int(first[2]) - int(second[5]) == int(second[4]) > 0  # the clean up's price, and nothing else


def test_the_marimo_notebook_passes_marimos_check():
    check = subprocess.run([sys.executable, "-m", "marimo", "check", str(NOTEBOOK)], capture_output=True, text=True,
                           timeout=120)
    assert (check.returncode, check.stdout + check.stderr) == (0, "")
