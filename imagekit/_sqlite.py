"""Opening the toolkit's own SQLite files (the ledger, batch journals, stores beside them): one way,
safe across processes, and only files that are imagekit's.

A file imagekit made carries its mark in the SQLite header (``PRAGMA application_id``) and the
version of the tables it holds (``PRAGMA user_version``). Opening a file that is not ours (another
program's database: a browser's history, an app's store) or that a newer imagekit made is refused
in one line before anything is written to it; a file of ours from before the mark (no mark, only our
tables) is taken as ours and marked.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Collection
from contextlib import closing

from .errors import ConfigError

__all__ = ["open_wal", "check_file", "APPLICATION_ID", "SCHEMA_VERSION", "BUSY_SECONDS"]

BUSY_SECONDS = 30.0
"""How long a statement waits for another process's lock before giving up."""
APPLICATION_ID = 0x494D4B54
"""imagekit's mark in a SQLite header ("IMKT")."""
SCHEMA_VERSION = 1
"""The version of the tables this imagekit writes; a file of a higher one was made by a newer imagekit."""


def open_wal(path: str, what: str, tables: Collection[str]) -> sqlite3.Connection:
    """An autocommit connection to ``path`` in WAL mode with ``synchronous=NORMAL``, once the file is
    known to be ``what`` (e.g. "a ledger"): new, or of imagekit's, holding none but ``tables``.

    Each commit is durable against a crash of the process (kill -9) without waiting for an fsync.
    Switching a new file to WAL needs a lock that SQLite does not wait for with its busy handler, so
    two processes opening one new file at once (a batch and a reader of its journal) retry here.
    """
    try:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_SECONDS)
    except sqlite3.OperationalError as exc:
        raise _unwritable(path, what, exc) from None
    try:
        _check_ours(db, path, what, tables)
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        db.execute("PRAGMA synchronous=NORMAL")
        _mark(db)
    except sqlite3.OperationalError as exc:
        db.close()
        raise _unwritable(path, what, exc) from None
    except BaseException:
        db.close()
        raise
    return db


def _unwritable(path: str, what: str, exc: sqlite3.OperationalError) -> Exception:
    """``exc`` as one line (ConfigError) when ``path``'s folder cannot be written (a read-only mount, a
    folder of another user's); else ``exc`` itself."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.access(folder, os.W_OK | os.X_OK):
        return exc
    return ConfigError(f"{path} cannot be written: {folder} is read-only to this process ({exc}); name {what} in a "
                       "folder you can write")


def check_file(path: str, what: str, tables: Collection[str]) -> None:
    """Refuse, as ``open_wal`` would, an existing SQLite file that is not ``what``; reads only (a
    mistake is told before anything is sent, not at the first write)."""
    try:  # not ``mode=ro``: closing a read-only connection to a WAL file would leave its -wal and -shm behind
        with closing(sqlite3.connect(path, timeout=BUSY_SECONDS)) as db:
            _check_ours(db, path, what, tables)
    except sqlite3.Error:
        return  # unreadable this instant (being made, locked): ``open_wal`` looks again


def _check_ours(db: sqlite3.Connection, path: str, what: str, tables: Collection[str]) -> None:
    """Refuse (ConfigError, nothing written) a file another program made, one of imagekit's of another
    kind, or one a newer imagekit made. Only the header and the catalogue are read."""
    (mark,) = db.execute("PRAGMA application_id").fetchone()
    (version,) = db.execute("PRAGMA user_version").fetchone()
    held = sorted(name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if not name.startswith("sqlite_"))
    untouched = "nothing was written to it"
    if mark == APPLICATION_ID and version > SCHEMA_VERSION:
        raise ConfigError(f"{path} was made by a newer imagekit (its tables are of version {version}; this one "
                          f"knows up to {SCHEMA_VERSION}): upgrade imagekit to open it ({untouched})")
    foreign = mark not in (0, APPLICATION_ID) or (mark == 0 and version != 0)  # another program's marks
    strangers = [name for name in held if name not in tables]
    if foreign or strangers:
        listed = strangers or held
        shown = "" if not listed else " (its tables: " + ", ".join(listed[:3]) + (", ...)" if len(listed) > 3 else ")")
        kind = "imagekit's file of another kind" if mark == APPLICATION_ID else "another program's SQLite database"
        raise ConfigError(f"{path} is {kind}{shown}, not {what}: name a new file or {what} imagekit made "
                          f"({untouched})")


def _mark(db: sqlite3.Connection) -> None:
    """Mark the file as imagekit's, of this version (once: a marked file is not written again here)."""
    (mark,) = db.execute("PRAGMA application_id").fetchone()
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if mark != APPLICATION_ID:
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    if version < SCHEMA_VERSION:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
