"""CSV cells a spreadsheet shows as text: the one place every CSV imagekit writes goes through.

A text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to
Excel, LibreOffice and Google Sheets (``=HYPERLINK(...)`` in a tag value would be live in the file
finance opens). Such a cell is written with a single quote before it, as OWASP advises, so the
spreadsheet shows it as text. Numbers stay numbers: a numeric column is never touched, and neither is
a text cell that is a plain number (``-5``, ``+1.5e3``: a spreadsheet reads it as that number, and no
formula can hide in it).

The round-trip rule: reading a file back (``pandas.read_csv``), a text cell that begins with ``'``
and then (past any further quotes) one of those characters had one quote added; ``restored`` takes
it off again, so every text comes back exactly.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FORMULA_STARTS", "inert", "inert_frame", "restored"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet takes a cell beginning with for the start of a formula."""
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def inert(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet shows as written: a text beginning like a formula gets a
    leading ``'``; anything else (numbers, plain-number text, other text) is returned as it is."""
    if isinstance(value, str) and _formula_like(value):
        return "'" + value
    return value


def _formula_like(text: str) -> bool:
    """Whether ``text``, past any quotes of ours, begins like a formula and is not a plain number (a
    text that begins with a quote and then so is quoted too: the round trip stays exact)."""
    bare = text.lstrip("'")
    return bare.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(bare)


def restored(value: Any) -> Any:
    """A cell read back from a CSV imagekit wrote, as it was before ``inert``."""
    if isinstance(value, str) and value.startswith("'") and _formula_like(value[1:]):
        return value[1:]
    return value


def inert_frame(frame: Any) -> Any:
    """A copy of a pandas DataFrame whose text cells, labels and index are ``inert`` (for ``to_csv``)."""
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype.kind == "O" or str(out[name].dtype) == "string":
            out[name] = out[name].map(inert)
    out.columns = out.columns.map(inert) if out.columns.dtype.kind == "O" and out.columns.nlevels == 1 else out.columns
    if out.index.dtype.kind == "O" and out.index.nlevels == 1:
        out.index = out.index.map(inert).rename(out.index.name)
    return out
