"""The reports' tests run on the workflows' sandboxes and fresh-user clients (both faces)."""

from tests.utils.workflow_fixtures import _boxes, _home, box, connect, either_ledger, ledger_location  # noqa: F401  (fixtures)
