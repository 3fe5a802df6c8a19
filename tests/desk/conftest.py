"""Fixtures for the review desk: the workflow tests' sandboxes (both faces) and fresh users."""

from __future__ import annotations

import pytest

from tests.utils.workflow_fixtures import _boxes, _home, box, connect, ledger_location  # noqa: F401  (fixtures)


@pytest.fixture
def ik(connect):  # noqa: F811
    """A client for a fresh pro user."""
    return connect()


@pytest.fixture
def four(ik):
    """Four fresh images of one create."""
    return list(ik.create("a lighthouse at dusk", style=ik.styles()[0], count=4).images)
