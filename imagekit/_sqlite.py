"""Opening the toolkit's own SQLite files (the ledger, batch journals): one way, safe across processes."""

from __future__ import annotations

import sqlite3
import time

BUSY_SECONDS = 30.0
"""How long a statement waits for another process's lock before giving up."""


def open_wal(path: str) -> sqlite3.Connection:
    """An autocommit connection to ``path`` in WAL mode with ``synchronous=NORMAL``.

    Each commit is durable against a crash of the process (kill -9) without waiting for an fsync.
    Switching a new file to WAL needs a lock that SQLite does not wait for with its busy handler, so
    two processes opening one new file at once (a batch and a reader of its journal) retry here.
    """
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_SECONDS)
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                db.close()
                raise
            time.sleep(0.01)
    db.execute("PRAGMA synchronous=NORMAL")
    return db
