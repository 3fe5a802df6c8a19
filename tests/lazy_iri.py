"""An early pytest plugin (``-p tests.lazy_iri`` in pyproject's addopts) that defers a 3-second import.

nbval, a plugin pytest loads at start, imports nbformat, which imports jsonschema, which imports
``rfc3987_syntax`` to check the "iri" and "iri-reference" formats: that module builds a Lark Earley
parser of the RFC's grammar as it is imported, 3.4 of a test process's 12 CPU-seconds of start and
collection, paid by every pytest-xdist worker. No test checks an IRI, so the parser is built when the
first IRI is checked, if ever: the stand-in imports the real module then and hands the call on.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_NAME = "rfc3987_syntax"


def _real() -> types.ModuleType:
    """The real module, imported now in place of the stand-in."""
    if sys.modules.get(_NAME) is _stand_in:
        del sys.modules[_NAME]
    return importlib.import_module(_NAME)


def is_valid_syntax(term: str, value: str) -> bool:
    """``rfc3987_syntax.is_valid_syntax``, the one name jsonschema takes from the module."""
    return bool(_real().is_valid_syntax(term, value))


def _attribute(name: str) -> Any:
    """Any other public name: the real module's. Private and dunder names are not looked up there:
    the import system asks for ``__path__`` and pytest for ``_mock_name`` without meaning to use them."""
    if name.startswith("_"):
        raise AttributeError(name)
    return getattr(_real(), name)


_stand_in = types.ModuleType(_NAME, __doc__)
_stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
_stand_in.__getattr__ = _attribute  # type: ignore[attr-defined]
if _NAME not in sys.modules:
    sys.modules[_NAME] = _stand_in
