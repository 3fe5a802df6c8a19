"""The example marimo notebooks run as scripts against their own embedded sandbox, and pass marimo's
own check (the widgets' interactive side is tested in tests/widgets/test_marimo_browser.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOK = NOTEBOOKS / "marimo_painter.py"
STUDIO = NOTEBOOKS / "marimo_studio.py"


def run_script(notebook: Path, tmp_path: Path) -> list[str]:
    """The lines ``notebook`` prints, run as a script against a fresh embedded sandbox."""
    env = {key: value for key, value in os.environ.items() if key not in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY")}
    env["IMAGEKIT_HOME"] = str(tmp_path / "home")
    run = subprocess.run([sys.executable, str(notebook)], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


@pytest.mark.slow(10)
def test_the_marimo_painter_notebook_runs_as_a_script(tmp_path):
    made, cleaned = run_script(NOTEBOOK, tmp_path)
    first = re.fullmatch(r"Image\(id=(\d+), status='COMPLETED', resolution='1024x576'\), (\d+) credits left", made)
    assert first, made
    second = re.fullmatch(r"cleaned up (\d+\.\d)% of image #(\d+): #(\d+), (\d+) credits; (\d+) credits left", cleaned)
    assert second, cleaned
    assert float(second[1]) > 0 and second[2] == first[1] and second[3] != first[1]
    assert int(first[2]) - int(second[5]) == int(second[4]) > 0  # the clean up's price, and nothing else


@pytest.mark.slow(10)
def test_the_marimo_studio_notebook_runs_as_a_script(tmp_path):
    (line,) = run_script(STUDIO, tmp_path)
    said = re.fullmatch(r"2 images made, chosen: #(\d+); (\d+) credits left", line)
    assert said, line


@pytest.mark.parametrize("notebook", [NOTEBOOK, STUDIO], ids=lambda path: path.stem)
def test_the_marimo_notebook_passes_marimos_check(notebook):
    check = subprocess.run([sys.executable, "-m", "marimo", "check", str(notebook)], capture_output=True, text=True,
                           timeout=120)
    assert (check.returncode, check.stdout + check.stderr) == (0, "")
