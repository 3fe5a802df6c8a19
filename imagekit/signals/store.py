"""The hash store: each image's signals, kept per account beside the ledger, so a near-duplicate of an
image made in any earlier batch (any day) is found, and no image is read twice to be measured.

A SQLite file, ``hashes.sqlite`` in the ledger file's folder (``$IMAGEKIT_HOME`` for a ledger in
PostgreSQL or none), keyed by the account the ledger records (its service and user) and image id.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from .._sqlite import open_wal
from ..home import home_dir
from ..ledger.entries import now, user_account

__all__ = ["HashStore", "store_beside", "account_key", "FILE_NAME", "COLUMNS"]

FILE_NAME = "hashes.sqlite"
COLUMNS = ("phash", "colours", "sharpness", "noise", "entropy", "width", "height")
"""What is kept of each image (``phash`` as 16 hex digits, ``colours`` its colour layout's bytes)."""
_SCHEMA = """CREATE TABLE IF NOT EXISTS signals (
    account TEXT NOT NULL, image_id INTEGER NOT NULL, phash TEXT NOT NULL, colours BLOB NOT NULL, sharpness REAL, noise REAL,
    entropy REAL, width INTEGER, height INTEGER, recorded TEXT NOT NULL, PRIMARY KEY (account, image_id))"""


def store_beside(ledger: Any) -> Path:
    """Where the hash store of a client with ``ledger`` lives: beside its file, else in ``$IMAGEKIT_HOME``."""
    path = getattr(ledger, "path", None)
    return (Path(path).parent if path is not None else home_dir()) / FILE_NAME


def account_key(client: Any, user_id: int | None) -> str:
    """The account a client's hashes are kept under: its ledger's (the service and the user), else
    the service's identity and ``user_id``."""
    ledger = getattr(client, "ledger", None)
    if ledger is not None and ledger.account:
        return str(ledger.account)
    return user_account(client.config.service, int(user_id or 0))


class HashStore:
    """The signals of one account's images, by image id."""

    def __init__(self, path: str | os.PathLike[str], account: str) -> None:
        self.path = Path(path)
        self.account = account

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(open_wal(str(self.path))) as db:
            db.execute(_SCHEMA)
            yield db

    def get(self, image_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The signals kept of these images (those measured before), by id."""
        wanted = sorted({int(i) for i in image_ids})
        if not wanted or not self.path.exists():
            return {}
        found: dict[int, dict[str, Any]] = {}
        with self._db() as db:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                rows = db.execute(f"SELECT image_id, {', '.join(COLUMNS)} FROM signals WHERE account = ? "
                                  f"AND image_id IN ({', '.join('?' * len(chunk))})", [self.account, *chunk])
                found.update({row[0]: dict(zip(COLUMNS, row[1:])) for row in rows})
        return found

    def hashes(self) -> dict[int, tuple[int, bytes, float]]:
        """Every image's hash, colour layout and shape (width over height; 1 when not kept) kept
        for the account, by id."""
        if not self.path.exists():
            return {}
        with self._db() as db:
            rows = db.execute("SELECT image_id, phash, colours, width, height FROM signals WHERE account = ?",
                              [self.account])
            return {image_id: (int(phash, 16), bytes(colours), width / height if width and height else 1.0)
                    for image_id, phash, colours, width, height in rows}

    def put(self, signals: dict[int, dict[str, Any]]) -> None:
        """Keep these images' signals (an image kept already keeps its first record)."""
        if not signals:
            return
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(f"INSERT OR IGNORE INTO signals (account, image_id, {', '.join(COLUMNS)}, recorded) "
                           f"VALUES (?, ?, {', '.join('?' * len(COLUMNS))}, ?)",
                           [(self.account, image_id, *(values[c] for c in COLUMNS), now())
                            for image_id, values in signals.items()])
            db.execute("COMMIT")
