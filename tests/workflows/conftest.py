"""Fixtures for the workflow tests: small, fast sandboxes of their own, and clients for fresh users
(tests/utils/workflow_fixtures.py holds them: the desk's and the integrations' tests use them too),
and the Dask cluster of the engines' tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.utils.workflow_fixtures import _boxes, _home, box, connect, either_ledger, ledger_location  # noqa: F401  (fixtures)


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[Any]:
    """A Dask cluster of processes (a scheduler and two workers) for the test session, started by
    the first test that asks for it (the ``*_engines.py`` tests share one xdist worker: one cluster)."""
    from tests.clusters import DaskCluster

    with DaskCluster() as cluster:
        yield cluster
