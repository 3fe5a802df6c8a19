"""The sandbox's layers (see ``imagekit/sandbox/__init__.py``): each module imports, at run time
(lazily or not), only its own layer and those below it."""

from __future__ import annotations

from pathlib import Path

from tests.imports import runtime_imports

SANDBOX = Path(__file__).resolve().parents[2] / "imagekit" / "sandbox"
ORDER = ["settings", "interface", "engines", "store", "domain", "service", "api", "serving", "__init__"]
"""Lowest first: a module may import its own layer and those before it."""


def layer_of(module: str) -> str:
    """The layer of ``imagekit.sandbox.<x>...``: its first part below the sandbox."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "__init__"


def sandbox_imports(path: Path, root: Path = SANDBOX.parent.parent) -> set[str]:
    """The ``imagekit.sandbox`` modules a file under ``root`` imports at run time."""
    return {name for name in runtime_imports(path, root) if name.startswith("imagekit.sandbox.")}


def modules() -> list[Path]:
    return sorted(SANDBOX.rglob("*.py"))


def test_every_module_lies_in_a_layer_and_the_top_stays_small():
    top = sorted(path.stem for path in SANDBOX.glob("*.py"))
    assert top == ["__init__", "service", "settings"]
    folders = sorted(path.name for path in SANDBOX.iterdir() if path.is_dir() and path.name != "__pycache__")
    assert folders == sorted(layer for layer in ORDER if (SANDBOX / layer).is_dir())


def test_each_layer_imports_only_itself_and_the_layers_below():
    upward = []
    for path in modules():
        own = layer_of(".".join(path.relative_to(SANDBOX.parent.parent).with_suffix("").parts))
        for name in sandbox_imports(path):
            if ORDER.index(layer_of(name)) > ORDER.index(own):
                upward.append(f"{path.relative_to(SANDBOX)} ({own}) imports {name}")
    assert upward == []


def test_the_parser_sees_lazy_imports_and_skips_type_checking_ones(tmp_path):
    path = tmp_path / "imagekit" / "sandbox" / "domain" / "m.py"
    path.parent.mkdir(parents=True)
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..service import Sandbox\n"
                    "from . import credits\ndef f():\n    from ..api.app import create_app\n")
    assert sandbox_imports(path, tmp_path) == {"imagekit.sandbox.domain.credits", "imagekit.sandbox.api.app.create_app"}
