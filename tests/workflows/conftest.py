"""Fixtures for the workflow tests: small, fast sandboxes of their own, and clients for fresh users
(tests/utils/workflow_fixtures.py holds them: the desk's, the engines' and the integrations' tests
use them too)."""

from __future__ import annotations

from tests.utils.workflow_fixtures import _boxes, _home, box, connect, either_ledger, ledger_location  # noqa: F401  (fixtures)
