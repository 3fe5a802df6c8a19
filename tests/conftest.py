"""Fixtures: real sandboxes on 127.0.0.1 (port 0) with temporary data directories.

Session fixtures are per process: under pytest-xdist each worker has its own sandboxes, temporary
folders and PostgreSQL cluster. A test that needs something outside Python carries a marker, so
``-m "not browser and not postgres"`` leaves it out; ``make test`` runs them all, and they fail
(never skip) when chromium or PostgreSQL is missing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from imagekit.sandbox import EmbeddedSandbox
from tests.disk import mount_tmpfs, unmount
from tests.helpers import SIZE, TLS
from tests.objectstore import CREDENTIALS, MotoServer
from tests.postgres import PostgresServer
from tests.utils.users import make_user

if TYPE_CHECKING:
    pass


NEEDS = {"postgres": "postgres", "lab": "browser", "chromium": "browser"}
"""Fixtures that need more than Python, and the marker of every test that uses one (directly or
through another fixture). Parameters that put a test on PostgreSQL carry ``postgres`` themselves
(``tests.helpers.on_both_databases``, ``either_ledger``): a fixture asked for by name at run time
is not in a test's fixture closure."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what each test needs, before ``-m`` deselects; put the slow ones first."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, marker in NEEDS.items():
            if fixture in used:
                item.add_marker(marker)
        if item.get_closest_marker("browser") and not item.path.name.endswith("_browser.py"):
            # xdist gives the *_browser.py files to one worker (conftest.py at the root), so that
            # one JupyterLab and one chromium serve them all.
            raise pytest.UsageError(f"{item.nodeid} drives a browser: its file's name must end in _browser.py")
    # The slowest tests first: under xdist each starts while others are still queued, instead of one
    # of them running alone at the end (xdist hands out groups largest first, then in this order).
    items.sort(key=_expected_seconds, reverse=True)


def _expected_seconds(item: pytest.Item) -> float:
    """``@pytest.mark.slow(seconds)``'s figure (5 when not given); 0 for a test not marked slow."""
    marker = item.get_closest_marker("slow")
    return 0.0 if marker is None else float(marker.args[0] if marker.args else 5)


@pytest.fixture(scope="session", autouse=True)
def private_home(tmp_path_factory) -> Iterator[None]:
    """Keep ledgers and embedded sandboxes of the whole run out of the user's ~/.imagekit."""
    previous = os.environ.get("IMAGEKIT_HOME")
    os.environ["IMAGEKIT_HOME"] = str(tmp_path_factory.mktemp("imagekit-home"))
    yield
    if previous is None:
        os.environ.pop("IMAGEKIT_HOME", None)
    else:
        os.environ["IMAGEKIT_HOME"] = previous


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL cluster for the whole run; ``postgres.new_database()`` gives each test its own."""
    with PostgresServer() as server:
        yield server


@pytest.fixture(scope="session", autouse=True)
def private_datasets_cache(tmp_path_factory) -> Iterator[None]:
    """Hugging Face datasets caches what a test loads in the run's own folder, not ~/.cache (its
    config reads the place when imported, which a test module may have done already)."""
    folder = tmp_path_factory.mktemp("huggingface")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HOME", str(folder))
        config = sys.modules.get("datasets.config")
        if config is not None:
            patch.setattr(config, "HF_DATASETS_CACHE", folder / "datasets")
        yield


@pytest.fixture(scope="session")
def s3() -> Iterator[MotoServer]:
    """moto's S3 server for the whole run; ``s3://`` URLs reach it through the AWS environment, as
    they would reach any S3 (``AWS_ENDPOINT_URL``, dummy credentials). One for the run: s3fs keeps
    one client per set of options, made with the endpoint of its time."""
    with MotoServer() as server, pytest.MonkeyPatch.context() as env:
        for name, value in {**CREDENTIALS, "AWS_ENDPOINT_URL": server.endpoint}.items():
            env.setenv(name, value)
        yield server


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 32 MB file system (tmpfs) to hold a sandbox's data folder and be filled (``tests.disk``)."""
    mount_tmpfs(tmp_path / "disk", "32m")
    try:
        yield tmp_path / "disk"
    finally:
        unmount(tmp_path / "disk")


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> str:
    """The sandbox's database: SQLite, unless a module runs on both (``tests.helpers.on_both_databases``)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def new_database(backend: str, request: pytest.FixtureRequest) -> Callable[[], str | None]:
    """``new_database()``: a fresh, empty database URL on the current backend (None: SQLite, the
    file inside the sandbox's data folder)."""
    if backend == "sqlite":
        return lambda: None
    return request.getfixturevalue("postgres").new_database


@pytest.fixture(scope="session")
def sandbox_on(new_database: Callable[[], str | None]) -> Callable[..., EmbeddedSandbox]:
    """``sandbox_on(data_dir, **settings)``: an (unstarted) embedded sandbox on a fresh database of
    the current backend."""
    def make(data_dir: Path, **settings: object) -> EmbeddedSandbox:
        return EmbeddedSandbox(data_dir, database_url=new_database(), **settings)
    return make


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory, sandbox_on) -> Iterator[EmbeddedSandbox]:
    """One sandbox for the whole session (tests that change the clock or faults use their own)."""
    with sandbox_on(tmp_path_factory.mktemp("sandbox"), base_size=SIZE) as running:
        yield running


@pytest.fixture(scope="session")
def spec_sandbox(tmp_path_factory, sandbox_on) -> Iterator[EmbeddedSandbox]:
    """A session sandbox answering exactly as the interface shows: no extension headers or fields."""
    with sandbox_on(tmp_path_factory.mktemp("spec-sandbox"), spec_exact=True, base_size=SIZE) as running:
        yield running


@pytest.fixture(params=["extended", "spec-exact"])
def either_sandbox(request) -> EmbeddedSandbox:
    """The session sandbox in each of its two faces, for what must work against the real service too."""
    return request.getfixturevalue("sandbox" if request.param == "extended" else "spec_sandbox")


@pytest.fixture
def own_sandbox(tmp_path, sandbox_on) -> Iterator[EmbeddedSandbox]:
    """A sandbox for one test, free to advance the clock or inject faults."""
    with sandbox_on(tmp_path / "sandbox") as running:
        yield running


@pytest.fixture
def api(sandbox) -> Iterator[httpx.Client]:
    """A raw HTTP client for a fresh standard user of the shared sandbox."""
    _, key = make_user(sandbox)
    with httpx.Client(base_url=sandbox.url, headers={"X-Api-Key": key}, timeout=60, verify=TLS) as client:
        yield client


@pytest.fixture
def client_for(sandbox):
    """``client_for(plan)``: a raw HTTP client for a fresh user on that plan (closed after the test)."""
    opened: list[httpx.Client] = []

    def open_client(plan: str = "standard", box: EmbeddedSandbox | None = None) -> httpx.Client:
        box = box or sandbox
        user_id, key = make_user(box, plan)
        client = httpx.Client(base_url=box.url, headers={"X-Api-Key": key}, timeout=60, verify=TLS)
        client.user_id = user_id
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        client.close()
