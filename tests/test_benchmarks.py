"""The benchmarks (``make bench``, not run by the suite) still import what they name: a helper moved
in the tests (``public_style`` out of a conftest) left two of them failing at their first line."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("bench_*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.name)
def test_every_name_a_benchmark_imports_from_the_project_exists(script):
    missing = []
    for node in ast.walk(ast.parse(script.read_text(), str(script))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("tests", "imagekit"):
            module = importlib.import_module(node.module)
            missing += [f"{node.module}.{alias.name} (line {node.lineno})" for alias in node.names
                        if not hasattr(module, alias.name)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("tests", "imagekit"):
                    importlib.import_module(alias.name)
    assert not missing, f"{script.name} imports what is not there: {', '.join(missing)}"
