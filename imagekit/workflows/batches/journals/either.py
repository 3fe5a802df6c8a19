"""The journal at a location, whichever kind it is: PostgreSQL for a ``postgresql://`` URL (a team's),
SQLite for a file (one machine's)."""

from __future__ import annotations

from pathlib import Path

from ....ledger.store import is_url
from .local import LocalJournal
from .shared import SharedJournal

__all__ = ["open_journal"]


def open_journal(where: str | Path, name: str, lease: float = 30.0) -> LocalJournal | SharedJournal:
    """The journal of the batch or sweep ``name`` at ``where`` (``lease``: the seconds a shared journal's
    row claims last)."""
    if is_url(str(where)):
        return SharedJournal(str(where), name, lease)
    return LocalJournal(Path(where), name)
