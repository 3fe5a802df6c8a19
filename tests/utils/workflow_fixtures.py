"""The workflow tests' sandboxes and clients, shared by the folders whose tests run batches,
chains and desks (workflows, desk, integrations): small fast sandboxes of both faces, one per
process, and clients for fresh users."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import imagekit
from imagekit.sandbox import EmbeddedSandbox
from tests.helpers import PATIENT_RETRIES, control
from tests.utils.users import make_user


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch) -> None:
    """Default ledgers go to the test's own folder, never the user's home."""
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path / "home"))


@pytest.fixture(scope="session")
def _boxes(tmp_path_factory) -> Iterator[Callable[[str], EmbeddedSandbox]]:
    """``_boxes(face, base_size=128)``: this process's workflow sandbox of that face and picture size,
    started when first asked for."""
    started: dict[tuple[str, int], EmbeddedSandbox] = {}

    def get(face: str, base_size: int = 128) -> EmbeddedSandbox:
        if (face, base_size) not in started:
            running = EmbeddedSandbox(tmp_path_factory.mktemp(f"box-{face}"), latency=0.05, base_size=base_size,
                                      spec_exact=face == "spec-exact")
            started[face, base_size] = running.start()
            running.spec_exact = face == "spec-exact"
        return started[face, base_size]

    yield get
    for running in started.values():
        running.stop()


@pytest.fixture(params=["extended", "spec-exact"])
def box(request, _boxes) -> Iterator[EmbeddedSandbox]:
    """A sandbox with small images and a little latency, so generations overlap. Every test runs
    twice: against the sandbox with its extensions, and spec-exact (the interface and nothing more),
    since nothing in the toolkit may need an extension.

    The sandbox is shared by the tests of one process (starting one per test cost more than most
    tests): each test works as fresh users of its own (``connect``), and whatever the sandbox holds
    for everyone is put back after each test (injected faults are removed, even when the test
    failed half-way)."""
    running = _boxes(request.param)
    yield running
    control(running, "DELETE", "faults")


@pytest.fixture
def ledger_location(tmp_path) -> str:
    """The ledger ``connect`` clients record into: a SQLite file. Modules that test the ledger itself
    override this with ``either_ledger``, so their tests run on PostgreSQL too."""
    return str(tmp_path / "ledger.sqlite")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def either_ledger(request, tmp_path) -> str:
    """A fresh ledger location: a SQLite file, or a database of the test run's PostgreSQL cluster."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.sqlite")
    return request.getfixturevalue("postgres").new_database()


@pytest.fixture
def connect(box, ledger_location) -> Iterator[Callable[..., Any]]:
    """``connect(plan="pro", **options)``: a Client for a fresh user of ``box`` (``user_id`` attribute)."""
    opened: list[imagekit.Client] = []

    def make(plan: str = "pro", **options: Any) -> imagekit.Client:
        user_id, key = make_user(box, plan)
        options.setdefault("retry_policy", PATIENT_RETRIES)
        options.setdefault("ledger", ledger_location)
        client = imagekit.Client(box.url, key, **options)
        client.user_id = user_id
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()
