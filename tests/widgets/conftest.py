"""Fixtures for the widget tests: one JupyterLab and one headless chromium page for the package
(package scope: Playwright's sync API keeps an event loop running in the main thread until it closes).
A test marked ``in_both_frontends`` runs once in JupyterLab and once in Notebook 7 (same server, same page).

The browser tests never skip: without chromium they fail and say how to install it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from imagekit.sandbox import EmbeddedSandbox
from tests.utils.browser import new_tab
from tests.utils.users import make_user

from .lab import CHROMIUM, CHROMIUM_FLAGS, FRONTENDS, Lab, Notebook


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
def chromium() -> Iterator[Any]:
    """Headless chromium (a Playwright Browser) for the package's browser tests."""
    if not CHROMIUM.is_file():
        pytest.fail(f"browser tests need chromium at {CHROMIUM}: apt-get install -y chromium", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


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


@pytest.fixture
def notebook(page, lab, request, shots: Path) -> Iterator[Notebook]:
    """A fresh notebook with its own kernel, in JupyterLab unless the test is ``in_both_frontends``; a
    screenshot of the page is kept in ``shots`` at the end."""
    name = re.sub(r"[^\w.-]+", "-", request.node.name)  # "test_x[notebook7]": no brackets in a path
    opened = Notebook(page, lab, f"{name}.ipynb", getattr(request, "param", "lab"))
    yield opened
    page.screenshot(path=shots / "final.png")
    opened.close()


