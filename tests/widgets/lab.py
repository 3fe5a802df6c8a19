"""JupyterLab on a loopback port, driven by headless Debian chromium through Playwright.

Follows the recipe proven on these machines: private Jupyter config (the announcements pop-up off),
cells run through the app's command API, waits on DOM hooks rather than sleeps. The same server serves
Notebook 7's page (``/notebooks/<path>``), built of the same components: a notebook opens in either.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

import httpx

from tests.helpers import TLS, free_port, wait_until

from .served import Served

CHROMIUM = Path(os.environ.get("IMAGEKIT_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
]


class Lab(Served):
    """A JupyterLab server in a subprocess, with its own config, data and root directories."""

    name = "JupyterLab"
    health = "/api/status"

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.root = home / "root"
        self.port = free_port()
        config = home / "config"
        (config / "labconfig").mkdir(parents=True)
        (config / "labconfig" / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
        self.root.mkdir()
        lab_env = {**os.environ, **env, "JUPYTER_CONFIG_DIR": str(config),
                   "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython")}
        argv = [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
            "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
            "--ServerApp.allow_root=True", "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
            f"--ServerApp.root_dir={self.root}", f"--LabApp.workspaces_dir={home / 'workspaces'}",
        ]
        super().__init__(argv, lab_env, f"http://127.0.0.1:{self.port}", home / "lab.log")

    def new_notebook(self, name: str) -> str:
        """Create an empty Python notebook in the server's root; returns its path."""
        content = {"cells": [], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}},
                   "nbformat": 4, "nbformat_minor": 5}
        response = httpx.put(f"{self.url}/api/contents/{name}", json={"type": "notebook", "content": content},
                             verify=TLS, timeout=120)
        response.raise_for_status()
        return name


_OPEN = """async (path) => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  app.shell.activateById(panel.id);
  return panel.id;
}"""

_READY = """async () => {
  const app = window.jupyterapp;
  await app.restored;
  const panel = app.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
}"""

FRONTENDS = ("lab", "notebook7")
"""Where a notebook opens: JupyterLab's page, or Notebook 7's page of one notebook."""

_RUN = """async (code) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  const notebook = panel.content;
  const cells = notebook.model.sharedModel;
  const last = cells.cells[cells.cells.length - 1];
  if (last && last.cell_type === 'code' && !last.source && last.execution_count === null) {
    last.setSource(code);  // the empty cell a new notebook opens with
  } else {
    cells.insertCell(cells.cells.length, {cell_type: 'code', source: code});
  }
  notebook.activeCellIndex = notebook.widgets.length - 1;
  await app.commands.execute('notebook:run-cell');
  return notebook.widgets[notebook.widgets.length - 1].model.outputs.toJSON();
}"""

_CLOSE = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.sessionContext) return;
  await panel.sessionContext.shutdown();
  panel.context.model.dirty = false;
  panel.dispose();
}"""


_RESTORED = """() => {
  const app = window.jupyterapp;
  if (app === undefined) return false;
  if (app.ikRestored === undefined) { app.ikRestored = false; app.restored.then(() => { app.ikRestored = true; }); }
  return app.ikRestored;
}"""
"""Whether the front end has restored its layout, polled: awaiting ``restored`` in one evaluate failed
("Resulting promise was garbage collected", Notebook 7 under load); a page that reloads meanwhile is
hooked again."""


def _show(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function(_RESTORED)


class Notebook:
    """One open notebook, in JupyterLab or in Notebook 7 (``frontend``): run code in it, read its text output."""

    def __init__(self, page: Any, lab: Lab, name: str, frontend: str = "lab") -> None:
        self.page = page
        self.frontend = frontend
        path = lab.new_notebook(name)
        if frontend == "notebook7":
            _show(page, f"{lab.url}/notebooks/{quote(path)}")
            page.evaluate(_READY)
        else:
            if not urlparse(page.url).path.startswith("/lab"):  # the page is still Notebook 7's
                _show(page, f"{lab.url}/lab")
            page.evaluate(_OPEN, path)

    def run(self, code: str) -> str:
        """Run ``code`` as a new cell and return its text output; a Python error fails the test."""
        outputs = self.page.evaluate(_RUN, code)
        text = []
        for output in outputs:
            if output["output_type"] == "error":
                raise AssertionError(f"cell failed: {output['ename']}: {output['evalue']}\n{code}")
            if output["output_type"] == "stream":
                text.append("".join(output["text"]))
            elif "text/plain" in output.get("data", {}):
                text.append("".join(output["data"]["text/plain"]))
        return "".join(text)

    def wait_output(self, code: str, expected: str, timeout: float = 20.0) -> None:
        """Run ``code`` until it prints ``expected``: a change made in the page reaches the kernel late
        when ipywidgets holds it back behind an earlier unanswered one (its sync throttle)."""
        printed: list[str] = []

        def prints_expected() -> bool:
            printed.append(self.run(code))
            return printed[-1] == expected

        try:
            wait_until(prints_expected, timeout=timeout, what=f"{code!r} printing {expected!r}")
        except AssertionError as error:
            raise AssertionError(f"{error}; it printed {printed[-1]!r} last") from None

    def close(self) -> None:
        self.page.evaluate(_CLOSE)
