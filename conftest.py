"""Fixtures for the README's Python blocks (pytest-markdown-docs runs them; the suite's own
fixtures are in tests/conftest.py), how the suite is shared among pytest-xdist's workers, and the
CPU each test costs (in the JUnit report, which CI sums by file)."""

from __future__ import annotations

import signal
import sys

import pytest

from tests.cpu import cpu_seconds

# A suite started in the background of a shell without job control (``nohup make test &``) inherits
# SIGINT ignored, and every process it starts would too: the tests of what Ctrl+C does need it heard.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

_CPU_AT_SETUP = pytest.StashKey[float]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item):
    item.stash[_CPU_AT_SETUP] = cpu_seconds()
    return (yield)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """Record the test's CPU-seconds, setup to teardown, as its ``cpu_seconds`` property: this
    process's threads, and the processes below it, live or ended (``tests/cpu.py``). A process that
    left the tree during the test (a daemon) could make the figure negative: it is 0 then."""
    try:
        return (yield)
    finally:
        if _CPU_AT_SETUP in item.stash:
            spent = cpu_seconds() - item.stash[_CPU_AT_SETUP]
            item.user_properties.append(("cpu_seconds", round(max(spent, 0.0), 2)))


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path, parent):
    """pytest-markdown-docs runs the code blocks of the Markdown files (README, docs, guides); it would
    also import every Python file under the test paths and walk its members for blocks in
    docstrings, which ours do not hold: 6 CPU-s of every test process's collection, for nothing."""
    collected = yield
    return [node for node in collected or () if type(node).__name__ != "MarkdownDocstringCodeModule"]


@pytest.fixture(autouse=True)
def _as_a_reader(request: pytest.FixtureRequest) -> None:
    """A README block runs as a reader's would: in an empty folder, with no service configured, so
    ``imagekit.connect()`` embeds a sandbox, whose data stays out of the reader's ~/.imagekit."""
    if request.node.get_closest_marker("markdown-docs") is None:
        return
    folder = request.getfixturevalue("tmp_path")
    monkeypatch = request.getfixturevalue("monkeypatch")
    monkeypatch.chdir(folder)
    monkeypatch.delenv("IMAGEKIT_BASE_URL", raising=False)
    monkeypatch.delenv("IMAGEKIT_API_KEY", raising=False)
    monkeypatch.setenv("IMAGEKIT_HOME", str(folder / "home"))
    # Hugging Face datasets caches what a block loads: in the folder too (read when datasets is
    # imported, so set on its config as well when an earlier test imported it).
    monkeypatch.setenv("HF_HOME", str(folder / "huggingface"))
    config = sys.modules.get("datasets.config")
    if config is not None:
        monkeypatch.setattr(config, "HF_DATASETS_CACHE", folder / "huggingface" / "datasets")
    # A block runs as in a new process: fsspec's memory:// store (one per process) starts empty, as a
    # reader's would, so a block that repeats an earlier one's run (a continuation) does not meet
    # the folder that run claimed under another IMAGEKIT_HOME.
    memory = sys.modules.get("fsspec.implementations.memory")
    if memory is not None:
        memory.MemoryFileSystem.store.clear()
        memory.MemoryFileSystem.pseudo_dirs[:] = [""]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """With ``-n`` (xdist's default ``--dist load``), tests go to the workers one at a time, except
    what must stay together: each notebook (its cells share one kernel, in order) and the README
    (a block may continue the one before it) run whole in one worker, and the browser tests
    (``*_browser.py``) share one worker, so one JupyterLab and one chromium serve them all; and each
    engine's file (``*_engine.py``) runs whole in one worker, so one Dask cluster and one Ray are
    started a run, side by side, each stopped after its file."""
    if config.getvalue("dist") != "load":
        return None  # another --dist asked for by name
    from xdist.scheduler import LoadScopeScheduling

    class Together(LoadScopeScheduling):
        """xdist's scope scheduling with our units (largest first: groups start early)."""

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            if path.endswith((".ipynb", ".md")):
                return path
            if path.endswith("_browser.py"):
                return "browser"
            if path.endswith("_engine.py"):
                return path
            return nodeid

    return Together(config, log)
