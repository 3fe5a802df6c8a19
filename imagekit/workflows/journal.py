"""The batch journal: a SQLite file recording each request before it is sent and each result after.

Row states::

    pending ──► sent ──► created ──► done
                  │          └─────► failed      (images FAILED, refunded; retried on the next run)
                  ├────────► pending (no answer, and the probe shows it never ran: safe to send again)
                  └────────► uncertain (no answer, and the probe could not tell: never re-sent blindly)
    pending ──► skipped (the budget, the balance or a full service stopped new work; retried next run)

``sent`` rows found when a run starts are the ones a crash interrupted; the runner resolves them
before anything else. Every write commits on its own (WAL), so a ``kill -9`` loses nothing written.

A journal is bound to the account it was first run against (``bind``): its rows name images of that
account only, so a run against another service, user or sandbox is refused rather than "resumed".
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._sqlite import open_wal
from ..errors import JournalMismatchError

__all__ = ["Journal", "RowRecord", "ImageRecord", "FINISHED", "FIELDS", "account_identity", "row_values"]

FINISHED = frozenset({"done"})
"""States a re-run leaves alone (``uncertain`` too, unless asked)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    group_id TEXT, low_id INTEGER, sent_at REAL, images TEXT NOT NULL DEFAULT '[]',
    credits REAL, error TEXT, latency REAL, account TEXT
);
CREATE TABLE IF NOT EXISTS binding (account TEXT NOT NULL, described TEXT NOT NULL);
"""


def account_identity(user: object, base_url: str) -> tuple[str, str]:
    """(identity, description) of the account behind ``user`` (a User from ``me()``).

    The identity is made of interface fields that never change for an account and differ between
    accounts and sandboxes (id, customer key, sign-up time), not of the base URL, whose port an
    embedded sandbox picks afresh each session.
    """
    fields = [getattr(user, name, None) for name in ("user_id", "customer_key", "created_at")]
    email = getattr(user, "email", None)
    return "|".join(map(str, fields)), f"user {fields[0]}{f' <{email}>' if email else ''} at {base_url}"


ImageRecord = dict[str, Any]
"""What the journal knows about one image of a row: id, status, error, credits, file."""


@dataclass
class RowRecord:
    """What the journal knows about one row."""

    key: str
    status: str = "pending"
    attempts: int = 0
    group_id: str | None = None
    low_id: int | None = None
    """Highest own image id known when the last attempt was sent: the probe starts above it."""
    sent_at: float | None = None
    images: list[ImageRecord] = field(default_factory=list)
    """One dict per image: id, status, error, credits, file."""
    credits: float | None = None
    error: str | None = None
    latency: float | None = None
    account: str | None = None
    """The account that sent its create (``account_identity``): only it can settle one in doubt."""

    @property
    def image_ids(self) -> list[int]:
        """Ids of the row's images."""
        return [image["id"] for image in self.images]

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> RowRecord:
        """A record from a journal row (``FIELDS``, in order)."""
        values = dict(zip(FIELDS, row))
        values["images"] = json.loads(values["images"] or "[]")
        return cls(**values)

    def image_credits(self, image: ImageRecord) -> float | None:
        """Credits of one of its images: the image's own, else an even share of the row's."""
        if image.get("credits") is not None:
            return float(image["credits"])
        return self.credits / len(self.images) if self.credits is not None and self.images else None


FIELDS = ("key", "status", "attempts", "group_id", "low_id", "sent_at", "images", "credits", "error", "latency",
          "account")
"""A journal row's columns, in order (a SQLite journal's and a shared one's alike)."""


def row_values(entry: RowRecord) -> list[Any]:
    """``entry`` as a journal row's values (``FIELDS``, in order)."""
    values = [getattr(entry, name) for name in FIELDS]
    values[FIELDS.index("images")] = json.dumps(entry.images)
    return values


class Journal:
    """Row states of one batch in a SQLite file (``":memory:"`` for a run that need not resume)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # WAL without an fsync per commit: an entry survives a kill -9 (what the journal promises),
        # and a spec-exact batch, whose creates go one at a time, waits for no disk.
        self._db = (sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                    if self.path == ":memory:" else open_wal(self.path))
        self._db.executescript(_SCHEMA)
        if "account" not in {row[1] for row in self._db.execute("PRAGMA table_info(rows)")}:
            self._db.execute("ALTER TABLE rows ADD COLUMN account TEXT")  # a journal from before shared sweeps

    def __repr__(self) -> str:
        return f"Journal({self.path!r})"

    def bind(self, accounts: Sequence[tuple[str, str]]) -> None:
        """Tie the journal to the accounts it runs for (``(identity, description)`` pairs, see
        ``account_identity``): the first run records them, a run with an account not among them
        raises JournalMismatchError, saying which each is."""
        with self._lock:
            bound = dict(self._db.execute("SELECT account, described FROM binding").fetchall())
            if not bound:
                self._db.executemany("INSERT INTO binding VALUES (?, ?)", accounts)
        stranger = next((described for identity, described in accounts if bound and identity not in bound), None)
        if stranger is not None:
            raise JournalMismatchError(
                f"The journal {self.path} was written against {' and '.join(bound.values())}, not {stranger}: its rows "
                "name another account's images. Pass another journal file, or delete this one to start over.")

    def load(self) -> dict[str, RowRecord]:
        """Every row the journal knows, by key."""
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(FIELDS)} FROM rows").fetchall()
        return {row[0]: RowRecord.from_row(row) for row in rows}

    def get(self, key: str) -> RowRecord:
        """One row (a fresh pending entry when unknown)."""
        with self._lock:
            row = self._db.execute(f"SELECT {', '.join(FIELDS)} FROM rows WHERE key = ?", (key,)).fetchone()
        return RowRecord.from_row(row) if row else RowRecord(key)

    def save(self, entry: RowRecord) -> RowRecord:
        """Write ``entry`` durably (before a request goes out, and after each answer)."""
        with self._lock:
            self._db.execute(f"INSERT OR REPLACE INTO rows ({', '.join(FIELDS)}) "
                             f"VALUES ({', '.join('?' * len(FIELDS))})", row_values(entry))
        return entry

    def max_image_id(self) -> int | None:
        """The highest image id any row holds."""
        ids = [i for entry in self.load().values() for i in entry.image_ids]
        return max(ids, default=None)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

