"""The signals' layers, as their package says: pixels, then store, then frame; never the workflows,
the sandbox or the widgets, which may import them."""

from __future__ import annotations

from pathlib import Path

from tests.imports import runtime_imports

ROOT = Path(__file__).resolve().parents[2]
SIGNALS = ROOT / "imagekit" / "signals"
ORDER = ["pixels", "store", "frame"]
"""Lowest first: a module may import those before it."""


def test_each_module_imports_only_those_below_it_and_nothing_above_the_signals():
    assert sorted(ORDER) == sorted(path.stem for path in SIGNALS.glob("*.py") if path.stem != "__init__")
    for place, module in enumerate(ORDER):
        names = runtime_imports(SIGNALS / f"{module}.py", ROOT)
        own = {name.split(".")[2] for name in names if name.startswith("imagekit.signals.")}
        assert own <= set(ORDER[:place]), f"{module} imports {own - set(ORDER[:place])}"
        above = {name for name in names if name.startswith(("imagekit.workflows", "imagekit.sandbox",
                                                            "imagekit.widgets", "imagekit.reports", "imagekit.cli"))}
        assert not above, f"{module} imports {above}"
