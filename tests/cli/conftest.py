"""The command line's tests that need a service run on the workflows' sandboxes and fresh-user
clients (both faces); every test gets an IMAGEKIT_HOME of its own."""

from tests.utils.workflow_fixtures import _boxes, _home, box, connect, either_ledger, ledger_location  # noqa: F401  (fixtures)
