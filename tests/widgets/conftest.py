"""Fixtures for the widget tests: one JupyterLab and one headless chromium page for the package
(package scope: Playwright's sync API keeps an event loop running in the main thread until it closes).
A test marked ``in_both_frontends`` runs once in JupyterLab and once in Notebook 7 (same server, same page).

The browser tests never skip: without chromium they fail and say how to install it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from imagekit.sandbox import EmbeddedSandbox
from tests.conftest import make_user

from .lab import CHROMIUM, CHROMIUM_FLAGS, FRONTENDS, Lab, Notebook
from .marimo import MarimoApps

in_both_frontends = pytest.mark.parametrize("notebook", FRONTENDS, indirect=True)
"""Run the test in JupyterLab and in Notebook 7 (the ``notebook`` fixture takes the front-end)."""


def _frontend(item: pytest.Item) -> int:
    """Where the test's notebook opens, as its place in ``FRONTENDS`` (JupyterLab unless parametrized)."""
    callspec = getattr(item, "callspec", None)
    return FRONTENDS.index(callspec.params.get("notebook", "lab")) if callspec else 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """JupyterLab's tests before Notebook 7's (stable otherwise): the page then loads JupyterLab once
    and each Notebook 7 notebook once, instead of reloading JupyterLab after every Notebook 7 test."""
    items.sort(key=lambda item: _frontend(item) if item.path.name.endswith("_browser.py") else 0)


@pytest.fixture(scope="package")
def lab_sandbox(tmp_path_factory) -> Iterator[EmbeddedSandbox]:
    """The sandbox the browser tests' kernels use: images at the service's size (1024 px), since the
    painter's payload and memory bounds are stated for the images people paint on."""
    with EmbeddedSandbox(tmp_path_factory.mktemp("lab-sandbox")) as running:
        yield running


@pytest.fixture(scope="package")
def lab(lab_sandbox, tmp_path_factory) -> Iterator[Lab]:
    """JupyterLab on 127.0.0.1 whose kernels reach ``lab_sandbox`` through IMAGEKIT_* variables."""
    _, key = make_user(lab_sandbox, "pro")
    home = tmp_path_factory.mktemp("lab")
    server = Lab(home, {"IMAGEKIT_BASE_URL": lab_sandbox.url, "IMAGEKIT_API_KEY": key,
                        "IMAGEKIT_HOME": str(home / "imagekit")})
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def marimo(lab_sandbox, tmp_path_factory) -> Iterator[MarimoApps]:
    """One ``marimo run`` for the package's marimo tests: each page runs its test's code (``app_code``,
    its user set first), instead of each test starting a server of its own."""
    server = MarimoApps(tmp_path_factory.mktemp("marimo"), {"IMAGEKIT_BASE_URL": lab_sandbox.url})
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def chromium() -> Iterator[Any]:
    """Headless chromium (a Playwright Browser) for the package's browser tests."""
    if not CHROMIUM.is_file():
        pytest.fail(f"browser tests need chromium at {CHROMIUM}: apt-get install -y chromium", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def new_tab(chromium: Any) -> Any:
    """A page of the size the widget tests measure against, waiting up to a minute for anything."""
    tab = chromium.new_page(viewport={"width": 1400, "height": 1000})
    tab.set_default_timeout(60_000)
    tab.complaints = []  # the page's console errors and warnings, and its uncaught errors: a failure shows them
    tab.on("console", lambda message: message.type in ("error", "warning")
           and tab.complaints.append(f"{message.type}: {message.text[:300]}"))
    tab.on("pageerror", lambda error: tab.complaints.append(f"uncaught: {str(error)[:300]}"))
    tab.add_init_script(PAGE_TRACE)
    return tab


# A timeline kept in the page (window.ikTrace, ms since the page loaded) that a failure prints: when
# anywidget's 2 s model timers fire, when a widget module is handed to the page as a blob, and the main
# thread's long tasks. A widget whose kernel messages never arrive is told apart from a slow one by it.
PAGE_TRACE = """
window.ikTrace = [];
const ikNote = (what) => { window.ikTrace.push(`${Math.round(performance.now())} ${what}`);
                           if (window.ikTrace.length > 200) window.ikTrace.shift(); };
const ikTimeout = AbortSignal.timeout.bind(AbortSignal);
AbortSignal.timeout = (ms) => {
  const signal = ikTimeout(ms);
  ikNote(`timer ${ms} ms set`);
  signal.addEventListener("abort", () => ikNote(`timer ${ms} ms fired`));
  return signal;
};
const ikBlobUrl = URL.createObjectURL.bind(URL);
URL.createObjectURL = (blob) => { ikNote(`blob url ${blob.type || "?"} ${blob.size} bytes`); return ikBlobUrl(blob); };
try {
  new PerformanceObserver((list) => list.getEntries().forEach((task) =>
    ikNote(`long task ${Math.round(task.duration)} ms from ${Math.round(task.startTime)}`)))
    .observe({ type: "longtask", buffered: true });
} catch (error) { ikNote(`no long task timings: ${error}`); }
"""


@pytest.fixture(scope="package")
def page(chromium, lab):
    """A chromium page showing the lab, ready for commands."""
    tab = new_tab(chromium)
    tab.goto(f"{lab.url}/lab")
    tab.wait_for_function("window.jupyterapp !== undefined")
    tab.evaluate("async () => { await window.jupyterapp.restored; }")
    yield tab
    tab.close()


OUTPUT = Path(__file__).parents[2] / "test-output" / "widgets"


@pytest.fixture
def shots(request) -> Path:
    """This test's folder under test-output/widgets/ (git ignores it): screenshots and measured figures."""
    folder = OUTPUT / request.node.name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def keep_figures(folder: Path, figures: dict) -> None:
    """Write what a test measured in the browser beside its screenshots, and print it."""
    (folder / "figures.json").write_text(json.dumps(figures, indent=2))
    print(f"{folder.name}: {json.dumps(figures)}")


@pytest.fixture
def notebook(page, lab, request, shots: Path) -> Iterator[Notebook]:
    """A fresh notebook with its own kernel, in JupyterLab unless the test is ``in_both_frontends``; a
    screenshot of the page is kept in ``shots`` at the end."""
    name = re.sub(r"[^\w.-]+", "-", request.node.name)  # "test_x[notebook7]": no brackets in a path
    opened = Notebook(page, lab, f"{name}.ipynb", getattr(request, "param", "lab"))
    yield opened
    page.screenshot(path=shots / "final.png")
    opened.close()


def served_edit(box, image_id: int) -> dict:
    """What the sandbox made for an edit's result: the request's parameters as it received them, the
    result's size and the credits it charged (read from the sandbox's own records, not the client's)."""
    from imagekit.sandbox.store.tables import Image

    with box.sandbox.db.read() as session:
        row = session.get(Image, image_id)
        return {"params": row.meta["params"], "size": (row.width, row.height), "credits": row.credit_cost}
