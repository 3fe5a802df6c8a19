"""A marimo app served on a loopback port (``marimo run --headless``), for the widgets' marimo tests.

marimo's anywidget model is the bare anywidget interface, so the widgets are checked there against
what JupyterLab's Backbone models forgive. An app runs its cells when a page opens it; what the
kernel holds comes back through files the app writes (there is no cell to run from the test).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.helpers import free_port


class MarimoApp:
    """``marimo run`` of one app file, with its own home (config, caches) and log."""

    def __init__(self, app: Path, env: dict[str, str]) -> None:
        home = app.parent
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = home / "marimo.log"
        self._env = {**os.environ, **env, "HOME": str(home / "home"), "XDG_CONFIG_HOME": str(home / "config"),
                     "XDG_CACHE_HOME": str(home / "cache"), "MARIMO_SKIP_UPDATE_CHECK": "1"}
        self._argv = [sys.executable, "-m", "marimo", "run", str(app), "--headless", "--no-token", "--no-sandbox",
                      "--host", "127.0.0.1", "--port", str(self.port)]
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 90.0) -> None:
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(self._argv, env=self._env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"marimo exited with {self.process.returncode}:\n{self.tail()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"marimo did not answer within {timeout} s:\n{self.tail()}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def app_source(cell: str) -> str:
    """A marimo app of one cell: ``cell``'s code, its last line shown."""
    body = "\n".join(f"    {line}" if line else "" for line in cell.strip().splitlines())
    return f"import marimo\n\napp = marimo.App()\n\n\n@app.cell\ndef _():\n{body}\n    return\n"
