"""The FinOps Foundation's ``focus-validator``, run as a user runs it: its console script, in a venv of
its own (it pins numpy 1.26 and pandera 0.17, which would fight ours).

The venv is made once per machine and version (a minute), kept in the temporary folder, and reused
while its console script answers; a lock lets one test process build it while the others wait.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VERSION = "1.0.0"
"""The validator (the package index holds this one; it validates FOCUS 1.0)."""
PACKAGES = [f"focus-validator=={VERSION}", "multimethod<1.11", "pyarrow<18"]
"""Without ``multimethod<1.11`` it fails at import (through pandera 0.17); pyarrow reads Parquet
files (the last that works with its numpy 1.26)."""


class FocusValidator:
    """``validate(file)``: what ``focus-validator --data-file FILE --validate-version 1.0`` printed,
    and whether it said the file is valid."""

    def __init__(self, home: Path | None = None) -> None:
        self.home = home or Path(tempfile.gettempdir()) / f"imagekit-focus-validator-{VERSION}"
        self.script = self.home / "bin" / "focus-validator"

    def ready(self) -> FocusValidator:
        """The venv, made first when there is none that works."""
        # A venv's scripts name its folder, so it is built where it lives, one process at a time.
        with open(self.home.with_name(self.home.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not self._answers():
                shutil.rmtree(self.home, ignore_errors=True)
                subprocess.run([sys.executable, "-m", "venv", str(self.home)], check=True, timeout=300)
                subprocess.run([str(self.home / "bin" / "python"), "-m", "pip", "install", "--quiet", *PACKAGES],
                               check=True, timeout=900)
                assert self._answers(), f"{self.script} does not run"
        return self

    def validate(self, data_file: Path) -> tuple[bool, str]:
        """Run the validator on ``data_file`` (CSV or Parquet); (valid, what it printed)."""
        # It reads its list of currency codes from a path relative to the working folder
        # (focus_validator/utils/currency_codes.csv): run it where its package lives.
        packages = subprocess.run([str(self.home / "bin" / "python"), "-c",
                                   "import focus_validator, os; print(os.path.dirname(os.path.dirname("
                                   "focus_validator.__file__)))"], capture_output=True, text=True, check=True,
                                  timeout=120).stdout.strip()
        done = subprocess.run([str(self.script), "--data-file", str(data_file), "--validate-version", "1.0"],
                              capture_output=True, text=True, cwd=packages, timeout=300)
        said = done.stdout + done.stderr
        if done.returncode:  # a crash or a signal says nothing of the file: the exit status says what happened
            said += f"\n(focus-validator exited with status {done.returncode})"
        # It exits 0 either way: its last line says which.
        return done.returncode == 0 and said.strip().endswith("Validation succeeded."), said

    def _answers(self) -> bool:
        if not self.script.exists():
            return False
        done = subprocess.run([str(self.script), "--supported-versions"], capture_output=True, text=True, timeout=120)
        return done.returncode == 0 and "1.0" in done.stdout
