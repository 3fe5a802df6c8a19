"""One journal interface: the SQLite and the PostgreSQL journal each implement every member of
``Journal`` with its parameters, and the batch engine names neither (no unions, no isinstance)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from imagekit.workflows.batches.journals.journal import Journal
from imagekit.workflows.batches.journals.local import LocalJournal
from imagekit.workflows.batches.journals.shared import SharedJournal

BATCHES = Path(inspect.getfile(Journal)).parent.parent
ENGINE = ["runner.py", "journals/feed.py", "probe.py", "leases.py", "batch.py"]


def members(cls: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(value) for name, value in vars(cls).items()
            if callable(value) and not name.startswith("_")}


@pytest.mark.parametrize("implementation", [LocalJournal, SharedJournal])
def test_each_journal_implements_every_member_of_the_interface(implementation):
    wanted = members(Journal)
    found = members(implementation)
    assert {name: found.get(name) for name in wanted} == wanted
    assert {"location", "lease"} <= set(Journal.__annotations__)


def test_the_engine_asks_no_journal_what_it_is():
    for name in ENGINE:
        tree = ast.parse((BATCHES / name).read_text())
        checks = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and ast.unparse(node.func) == "isinstance" and "ournal" in ast.unparse(node.args[1])]
        unions = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.BinOp)
                  and isinstance(node.op, ast.BitOr) and "SharedJournal" in ast.unparse(node)]
        assert checks == unions == [], name
