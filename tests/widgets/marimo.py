"""A marimo app served on a loopback port (``marimo run --headless``), for the widgets' marimo tests.

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


class MarimoApp(Served):
    """``marimo run`` of one app file, with its own home (config, caches) and log."""

    name = "marimo"
    health = "/health"

    def __init__(self, app: Path, env: dict[str, str]) -> None:
        home = app.parent
        self.port = free_port()
        app_env = {**os.environ, **env, "HOME": str(home / "home"), "XDG_CONFIG_HOME": str(home / "config"),
                   "XDG_CACHE_HOME": str(home / "cache"), "MARIMO_SKIP_UPDATE_CHECK": "1"}
        argv = [sys.executable, "-m", "marimo", "run", str(app), "--headless", "--no-token", "--no-sandbox",
                "--host", "127.0.0.1", "--port", str(self.port)]
        super().__init__(argv, app_env, f"http://127.0.0.1:{self.port}", home / "marimo.log")


def app_source(cell: str) -> str:
    """A marimo app of one cell: ``cell``'s code, its last line shown."""
    body = "\n".join(f"    {line}" if line else "" for line in cell.strip().splitlines())
    return f"import marimo\n\napp = marimo.App()\n\n\n@app.cell\ndef _():\n{body}\n    return\n"
