"""Where a run keeps its journal (``journal_location``: what it is told, else the environment, else
its output folder), and the journal there, whichever kind it is (``open_journal``): PostgreSQL for a
``postgresql://`` URL (a team's), SQLite for a file (one machine's)."""

from __future__ import annotations

import os
from pathlib import Path

from ....ledger.store import checked_location, is_url
from ....storage import Store
from .local import TABLES as JOURNAL_TABLES, LocalJournal
from .shared import SharedJournal

__all__ = ["ENV_JOURNAL_URL", "journal_location", "open_journal"]

ENV_JOURNAL_URL = "IMAGEKIT_JOURNAL_URL"
"""The journal a batch keeps unless told otherwise: a PostgreSQL URL for sweeps several processes drain."""
PathLike = str | os.PathLike[str]


def journal_location(journal: PathLike | None = None, out_dir: PathLike | Store | None = None) -> str | Path | None:
    """Where a run keeps its journal: ``journal``, else IMAGEKIT_JOURNAL_URL, else ``journal.sqlite`` in
    a local ``out_dir``; None for one in memory. A SQLite file whose folder exists or a postgresql://
    URL, else one line (ConfigError)."""
    chosen = journal if journal is not None else os.environ.get(ENV_JOURNAL_URL)
    out = out_dir if isinstance(out_dir, Store) or out_dir is None else Store(out_dir)
    if journal is not None and out is not None and not out.remote and not is_url(os.fspath(journal)) \
            and not out.exists() and os.path.abspath(Path(journal).parent) == os.path.abspath(out.location):
        return Path(journal)  # in an out_dir not made yet: the run makes it before it opens the journal
    if chosen is not None:
        chosen = checked_location(chosen, "a journal", JOURNAL_TABLES)
        if is_url(str(chosen)):
            return str(chosen)
        if journal is not None:
            return Path(journal)
    if out is not None and not out.remote:
        return Path(out.location) / "journal.sqlite"
    return None



def open_journal(where: str | Path, name: str, lease: float = 30.0) -> LocalJournal | SharedJournal:
    """The journal of the batch or sweep ``name`` at ``where`` (``lease``: the seconds a shared journal's
    row claims last)."""
    if is_url(str(where)):
        return SharedJournal(str(where), name, lease)
    return LocalJournal(Path(where), name)
