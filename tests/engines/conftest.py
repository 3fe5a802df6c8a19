"""Fixtures for the engines' tests: the workflows' sandboxes and fresh-user clients
(tests/utils/workflow_fixtures.py), and the Dask cluster and the local Ray, each started by the
first test of its file that asks for it and stopped after that file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.utils.workflow_fixtures import _boxes, _home, box, connect, either_ledger, ledger_location  # noqa: F401  (fixtures)


@pytest.fixture(scope="module")
def dask_cluster() -> Iterator[Any]:
    """A Dask cluster of processes (a scheduler and two workers), started by the first test that asks
    for it and stopped after its module: only ``tests/engines/test_dask_engine.py`` asks, so one a test session
    (the file runs whole in one xdist worker), and the cluster's idle beat costs the rest of the run nothing."""
    from tests.clusters import DaskCluster

    with DaskCluster() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def local_ray() -> Iterator[str]:
    """A local Ray (its GCS address), started by the first test that asks for it and shut down after
    its module (``test_ray_engine.py``), as ``dask_cluster`` is: one a test session; idle, Ray's processes
    spend some 4 % of a core."""
    from tests.clusters import local_ray

    with local_ray() as address:
        yield address
