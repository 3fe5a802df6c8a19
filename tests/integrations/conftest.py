"""Fixtures for the integration tests: the workflow tests' sandboxes (both faces) and clients, and a
real MLflow tracking store in the test's own folder."""

from __future__ import annotations

from tests.utils.tracking import EXPERIMENT, _empty_store, tracking  # noqa: F401  (fixtures this folder's tests use)
from tests.utils.workflow_fixtures import _boxes, _home, box, connect, ledger_location  # noqa: F401  (shared fixtures)


