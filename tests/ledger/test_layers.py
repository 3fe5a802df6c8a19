"""The ledger's layers: each module imports only those below it, never the workflows; and a plain
client's request loads neither the workflows nor pandas."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import make_user

LEDGER = Path(__file__).resolve().parents[2] / "imagekit" / "ledger"
ORDER = ["entries", "columns", "store", "periods", "spool", "writer", "writes", "outage", "budgets", "alerts", "prices",
         "reconcile", "forecasts", "export", "book", "recorder"]
"""Lowest first: a module may import those before it."""


def imported(module: str) -> set[str]:
    """The ``imagekit`` modules (as ``imagekit.x.y``) one ledger module imports, lazily or not."""
    package, found = ["imagekit", "ledger"], set()
    for node in ast.walk(ast.parse((LEDGER / f"{module}.py").read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.update([target] if node.module else [f"{target}.{alias.name}" for alias in node.names])
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("imagekit")}


def test_every_ledger_module_has_a_place_in_the_order():
    assert sorted(ORDER) == sorted(path.stem for path in LEDGER.glob("*.py") if path.stem != "__init__")


def test_each_layer_imports_only_those_below_it_and_never_the_workflows():
    for place, module in enumerate(ORDER):
        ledger_imports = {name.split(".")[2] for name in imported(module) if name.startswith("imagekit.ledger.")}
        assert ledger_imports <= set(ORDER[:place]), f"{module} imports {ledger_imports - set(ORDER[:place])}"
        assert not {name for name in imported(module) if name.startswith(("imagekit.workflows", "imagekit.reports"))}


def test_a_plain_client_loads_neither_the_workflows_nor_pandas(sandbox, tmp_path):
    _, key = make_user(sandbox)
    script = (f"import sys, imagekit\n"
              f"ik = imagekit.Client({sandbox.url!r}, {key!r}, ledger={str(tmp_path / 'ledger.sqlite')!r})\n"
              "ik.me(); ik.usage()\n"
              "assert ik.ledger.entries(readings=True), 'the ledger recorded the balance'\n"
              "print(sorted(m for m in sys.modules if m.startswith('imagekit.workflows') or m.split('.')[0] == 'pandas'))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
