"""What a module imports when it runs: the parser the layer and cycle tests share."""

from __future__ import annotations

import ast
from pathlib import Path


def runtime_imports(path: Path, root: Path) -> set[str]:
    """The dotted names a module under ``root`` imports at run time (``from a import b`` gives
    ``a.b``, whether ``b`` is a module or a name in ``a``: the caller resolves it to the longest
    module it names): every import, lazy ones inside functions too, except those under
    ``if TYPE_CHECKING:``, which never run."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = parts[:-1]
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text())]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        pending.extend(ast.iter_child_nodes(node))
    return found
