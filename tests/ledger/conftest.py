"""The ledger's end-to-end tests run on the workflows' sandboxes and clients: each test against both
sandbox faces, and (where a module asks for ``either_ledger``) on SQLite and PostgreSQL ledgers."""

from tests.utils.workflow_fixtures import _boxes, _home, box, connect, either_ledger, ledger_location  # noqa: F401 (fixtures)
