"""No run-time import cycle anywhere in imagekit: imports inside functions count, those under
``if TYPE_CHECKING:`` do not (they never run). A cycle makes the order modules load in matter and
ties layers together that should not know each other."""

from __future__ import annotations

from pathlib import Path

from tests.imports import runtime_imports

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each ``imagekit`` module and the ``imagekit`` modules it imports at run time."""
    paths = {module_name(path, root): path for path in (root / "imagekit").rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges[name] = set()
        for target in runtime_imports(path, root):
            while target and target not in paths:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges[node]:
            if target not in index:
                strong(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            strong(node)
    return found


def test_no_module_of_imagekit_takes_part_in_a_run_time_import_cycle():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_lazy_cycle_and_ignores_type_checking_imports(tmp_path):
    package = tmp_path / "imagekit"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from . import b\n")
    (package / "b.py").write_text("from .a import f\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (package / "d.py").write_text("from . import c\n")
    assert cycles(graph(tmp_path)) == [["imagekit.a", "imagekit.b"]]
