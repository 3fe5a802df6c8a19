"""marimo apps served on a loopback port (``marimo run --headless`` of a folder), for the widgets' marimo tests.

marimo's anywidget model is the bare anywidget interface, so the widgets are checked there against
what JupyterLab's Backbone models forgive. An app runs its cells when a page opens it; what the
kernel holds comes back through files the app writes (there is no cell to run from the test).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlencode

from tests.helpers import free_port

from .served import Served

LOADER = """import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo
    path = mo.query_params()["app"]
    lines = open(path).read().rstrip().splitlines()
    scope = {"__name__": "__main__"}
    exec(compile("\\n".join(lines[:-1]), path, "exec"), scope)
    shown = eval(compile(lines[-1], path, "eval"), scope)
    shown
    return
"""
"""The one app the server runs: it runs the code of the file its page's ``?app=`` names, the last line shown."""


class MarimoApps(Served):
    """One ``marimo run`` for the run's marimo tests: each test's page runs its own code (``add``) in the
    server's one app, ``LOADER`` (marimo finds no app file added to a folder after it started, and a
    server each cost more than the tests). Its own home (config, caches) and log."""

    name = "marimo"
    health = "/health"

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.folder = home / "apps"
        self.folder.mkdir(parents=True)
        (self.folder / "loader.py").write_text(LOADER)
        self.port = free_port()
        app_env = {**os.environ, **env, "HOME": str(home / "home"), "XDG_CONFIG_HOME": str(home / "config"),
                   "XDG_CACHE_HOME": str(home / "cache"), "MARIMO_SKIP_UPDATE_CHECK": "1"}
        argv = [sys.executable, "-m", "marimo", "run", str(self.folder / "loader.py"), "--headless", "--no-token",
                "--no-sandbox", "--host", "127.0.0.1", "--port", str(self.port)]
        super().__init__(argv, app_env, f"http://127.0.0.1:{self.port}", home / "marimo.log")

    def add(self, name: str, code: str) -> str:
        """Keep ``code`` (``app_code``) as ``name``.py; the URL of a page that runs it."""
        path = self.folder / f"{name}.py"
        path.write_text(code)
        return f"{self.url}/?{urlencode({'app': str(path)})}"


def app_code(cell: str, env: dict[str, str] | None = None) -> str:
    """What a test's page runs: ``env`` set first (the test's user and IMAGEKIT_HOME; the pages of a
    run share one server, one test at a time here), then ``cell``, its last line shown."""
    prelude = f"import os\nos.environ.update({env!r})\n" if env else ""
    return prelude + cell.strip() + "\n"
