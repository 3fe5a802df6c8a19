"""marimo apps served on a loopback port (``marimo run --headless`` of a folder), for the widgets' marimo tests.

marimo's anywidget model is the bare anywidget interface, so the widgets are checked there against
what JupyterLab's Backbone models forgive. An app runs its cells when a page opens it; what the
kernel holds comes back through files the app writes (there is no cell to run from the test).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.helpers import free_port

from .served import Served


class MarimoApps(Served):
    """``marimo run`` of a folder of apps, one server for the run: each test adds its app file to the
    folder and opens it by name (``url_of``); marimo finds a file added after it started. Its own
    home (config, caches) and log."""

    name = "marimo"
    health = "/health"

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.folder = home / "apps"
        self.folder.mkdir(parents=True)
        self.port = free_port()
        app_env = {**os.environ, **env, "HOME": str(home / "home"), "XDG_CONFIG_HOME": str(home / "config"),
                   "XDG_CACHE_HOME": str(home / "cache"), "MARIMO_SKIP_UPDATE_CHECK": "1"}
        argv = [sys.executable, "-m", "marimo", "run", str(self.folder), "--headless", "--no-token", "--no-sandbox",
                "--host", "127.0.0.1", "--port", str(self.port)]
        super().__init__(argv, app_env, f"http://127.0.0.1:{self.port}", home / "marimo.log")

    def start(self, timeout: float = 90.0) -> None:
        super().start(timeout)

    def add(self, name: str, source: str) -> str:
        """Put the app ``source`` in the folder as ``name``.py; the URL that opens it."""
        (self.folder / f"{name}.py").write_text(source)
        return f"{self.url}/?file={name}.py"


def app_source(cell: str, env: dict[str, str] | None = None) -> str:
    """A marimo app of one cell: ``cell``'s code, its last line shown; ``env`` set first (the test's
    user and IMAGEKIT_HOME: the apps of a run share one server, whose kernels run one app at a time here)."""
    if env:
        cell = f"import os\nos.environ.update({env!r})\n{cell.strip()}"
    body = "\n".join(f"    {line}" if line else "" for line in cell.strip().splitlines())
    return f"import marimo\n\napp = marimo.App()\n\n\n@app.cell\ndef _():\n{body}\n    return\n"
