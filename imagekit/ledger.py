"""The credit ledger: a SQLite record of every operation the toolkit performed, and what it cost.

Each client feeds its ledger from the HTTP layer (see ``accounting``): every request other than a
read (create, edits, cancellations, prompts) becomes one entry with its time, operation, image ids,
request id, credits charged and where that figure came from, balances after, status and latency;
the balances a read shows become ``balance`` entries. Workflows add what only they can see: refunds
of images that failed after an asynchronous create, and charges of requests whose answer was lost.

Entries are keyed by account (a hash of base URL and API key, never the key), so one file can
serve several users and services. The file opens on the first entry: a client that does nothing
writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from . import config as _config
from ._sqlite import open_wal

if TYPE_CHECKING:
    import pandas as pd

    from ._http import Hook
    from .config import Config

__all__ = ["Ledger", "Entry", "account_of", "sandbox_account", "default_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL, account TEXT NOT NULL, operation TEXT NOT NULL,
    source_id INTEGER, image_ids TEXT NOT NULL, request_id TEXT, group_id TEXT, style_id INTEGER,
    credits REAL, balance REAL, daily_credit REAL, monthly_credit REAL, default_credit REAL,
    status TEXT NOT NULL, error TEXT, latency REAL, source TEXT
);
CREATE INDEX IF NOT EXISTS entries_account ON entries (account, time);
CREATE TABLE IF NOT EXISTS prices (
    account TEXT NOT NULL, key TEXT NOT NULL, credits REAL NOT NULL, source TEXT NOT NULL, time TEXT NOT NULL,
    PRIMARY KEY (account, key)
);
"""
_COLUMNS = ("time", "account", "operation", "source_id", "image_ids", "request_id", "group_id", "style_id",
            "credits", "balance", "daily_credit", "monthly_credit", "default_credit", "status", "error",
            "latency", "source")
SOURCES = ("reported", "priced", "reconciled")
"""Where an entry's credits came from: the service's credit headers (an extension), the account's
prices (CreditCostInfo, styles' and images' creditCost), or the balances the service reported."""
BALANCE = "balance"
"""The operation name of a balance reading (a read that showed the balance; not an operation)."""
EDIT_PATH = re.compile(r"^/api/images/(\d+)/(\w+)$")


def default_path() -> Path:
    """Where ledgers live unless told otherwise: ``$IMAGEKIT_HOME/ledger.sqlite``."""
    return _config.home_dir() / "ledger.sqlite"


def account_of(base_url: str, api_key: str) -> str:
    """A stable, non-secret id for one account on one service."""
    return hashlib.sha256(f"{base_url.rstrip('/')}\0{api_key}".encode()).hexdigest()[:16]


def sandbox_account(identity: str) -> str:
    """The id of an embedded sandbox's demo account: its data folder's identity (a new port and
    key each session would otherwise make yesterday's history someone else's)."""
    return hashlib.sha256(f"sandbox\0{identity}".encode()).hexdigest()[:16]


@dataclass
class Entry:
    """One operation as the ledger stores it."""

    operation: str
    """create, an edit name (enhance, removeBg...), cancelEdit, textToPrompt, refund, reconcile..."""
    status: str
    """HTTP status of the answer, or ``no_response``."""
    account: str = ""
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))
    source_id: int | None = None
    """The image an edit started from."""
    image_ids: list[int] = field(default_factory=list)
    """Images the operation made."""
    request_id: str | None = None
    group_id: str | None = None
    style_id: int | None = None
    credits: float | None = None
    """Credits charged (negative for a refund); None while unknown."""
    balance: float | None = None
    """Total balance after the operation, when known."""
    daily_credit: float | None = None
    monthly_credit: float | None = None
    default_credit: float | None = None
    error: str | None = None
    latency: float | None = None
    source: str | None = None
    """Where ``credits`` came from: one of ``SOURCES``; None while unknown, or nothing was charged."""
    seq: int | None = field(default=None, compare=False)
    """Position in the file (set when read back)."""


def operation_of(path: str) -> str | None:
    """The ledger's name for a request path; None for paths that are not operations."""
    if path == "/api/images/create":
        return "create"
    if path.startswith("/api/images/cancelEdit/"):
        return "cancelEdit"
    if path in ("/api/images/textToPrompt", "/api/images/imageToPrompt"):
        return path.rsplit("/", 1)[1]
    match = EDIT_PATH.match(path)
    return match.group(2) if match else None


class _Store:
    """One SQLite file, opened on first use and shared by every Ledger on that path."""

    _open: dict[Path, _Store] = {}
    _open_lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    @classmethod
    def at(cls, path: Path) -> _Store:
        with cls._open_lock:
            return cls._open.setdefault(path.resolve(), cls(path))

    def db(self) -> sqlite3.Connection:
        """The connection (caller holds ``lock``)."""
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit, WAL: each entry is durable on its own and a kill -9 loses at most the last.
            db = open_wal(str(self.path))
            db.executescript(_SCHEMA)
            if "source" not in {row[1] for row in db.execute("PRAGMA table_info(entries)")}:
                db.execute("ALTER TABLE entries ADD COLUMN source TEXT")  # a ledger from before sources
            self._db = db
        return self._db

    def close(self) -> None:
        with self.lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class Ledger:
    """Operations and credits of one account in a SQLite file; ``to_pandas()`` reads them back."""

    def __init__(self, path: str | Path | None = None, *, account: str = "") -> None:
        self.path = Path(path) if path is not None else default_path()
        """The SQLite file."""
        self.account = account
        """The account this ledger records and shows ("" shows every account in the file)."""
        self._store = _Store.at(self.path)

    def __repr__(self) -> str:
        return f"Ledger(path={str(self.path)!r}, account={self.account!r})"

    def for_account(self, account: str) -> Ledger:
        """The same file, recording and showing ``account``."""
        return Ledger(self.path, account=account)

    def record(self, entry: Entry) -> Entry:
        """Append one entry (for this ledger's account unless the entry names one)."""
        entry.account = entry.account or self.account
        row = asdict(entry)
        row["image_ids"] = json.dumps(entry.image_ids)
        with self._store.lock:
            cursor = self._store.db().execute(
                f"INSERT INTO entries ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                [row[name] for name in _COLUMNS])
        entry.seq = cursor.lastrowid
        return entry

    def settle(self, seq: int, credits: float, source: str) -> None:
        """Give entry ``seq`` its credits, once they are known."""
        with self._store.lock:
            self._store.db().execute("UPDATE entries SET credits = ?, source = ? WHERE seq = ?", (credits, source, seq))

    def reading(self, balance: float) -> None:
        """Record a balance the service showed, unless the last entry is the same reading."""
        if self.path.exists():
            with self._store.lock:
                last = self._store.db().execute("SELECT operation, balance FROM entries WHERE account = ? "
                                                "ORDER BY seq DESC LIMIT 1", (self.account,)).fetchone()
            if last == (BALANCE, balance):
                return
        self.record(Entry(operation=BALANCE, status="200", balance=balance))

    def prices(self) -> dict[str, float]:
        """Known prices of this account: ``cost:<CreditCostInfo type>``, ``style:<id>``,
        ``collection:<id>`` -> credits per operation or image."""
        if not self.path.exists():
            return {}
        with self._store.lock:
            rows = self._store.db().execute("SELECT key, credits FROM prices WHERE account = ?", (self.account,))
            return dict(rows.fetchall())

    def learn_price(self, key: str, credits: float, source: str) -> None:
        """Remember a price (the newest sighting wins)."""
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        with self._store.lock:
            self._store.db().execute("INSERT OR REPLACE INTO prices VALUES (?, ?, ?, ?, ?)",
                                     (self.account, key, float(credits), source, now))

    def entries(self, account: str | None = None, *, readings: bool = False) -> list[Entry]:
        """Entries of ``account`` (default: this ledger's; "" for all), oldest first; with
        ``readings``, the balance readings among them."""
        account = self.account if account is None else account
        if not self.path.exists():
            return []
        where = [("account = ?", account)] if account else []
        if not readings:
            where.append(("operation != ?", BALANCE))
        query = f"SELECT {', '.join(_COLUMNS)}, seq FROM entries"
        if where:
            query += " WHERE " + " AND ".join(clause for clause, _ in where)
        with self._store.lock:
            rows = self._store.db().execute(query + " ORDER BY seq", [value for _, value in where]).fetchall()
        return [Entry(**{**dict(zip((*_COLUMNS, "seq"), row)), "image_ids": json.loads(row[4])}) for row in rows]

    def created_in_group(self, group_id: str) -> tuple[list[int], float | None]:
        """Images and credits of the answered create that carried ``group_id`` (empty if none)."""
        with self._store.lock:
            row = self._store.db().execute(
                "SELECT image_ids, credits FROM entries WHERE account = ? AND group_id = ? AND operation = 'create'"
                " AND image_ids != '[]' ORDER BY seq DESC LIMIT 1", (self.account, group_id)).fetchone()
        return (json.loads(row[0]), row[1]) if row else ([], None)

    def credits_of(self, request_id: str) -> float | None:
        """Credits of this account's operation sent with ``request_id`` (an edit's), when known."""
        with self._store.lock:
            row = self._store.db().execute("SELECT credits FROM entries WHERE account = ? AND request_id = ? "
                                           "ORDER BY seq DESC LIMIT 1", (self.account, request_id)).fetchone()
        return row[0] if row else None

    def max_image_id(self) -> int | None:
        """The highest image id this account's entries name."""
        ids = [i for entry in self.entries() for i in entry.image_ids]
        return max(ids, default=None)

    def total(self, account: str | None = None) -> float:
        """Credits charged, net of refunds."""
        return sum(entry.credits or 0 for entry in self.entries(account))

    def to_pandas(self, account: str | None = None) -> pd.DataFrame:
        """The entries as a DataFrame with ``time`` parsed (default: this ledger's account)."""
        import pandas as pd

        frame = pd.DataFrame([asdict(entry) for entry in self.entries(account)], columns=list(_COLUMNS))
        frame["time"] = pd.to_datetime(frame["time"], utc=True, format="ISO8601")
        return frame.astype({"source_id": "Int64", "style_id": "Int64"})  # ids stay integers beside gaps

    def hook(self, config: Config) -> Hook:
        """An HTTP hook recording every operation a client with ``config`` performs, and the
        prices and balances its reads show (see ``accounting``)."""
        from .accounting import Recorder  # here: reading a ledger (reports, the CLI) needs no HTTP stack

        return Recorder(self, config)

    def reconcile(self) -> None:
        """Give entries whose credits are unknown the credits the balances show (see ``accounting``)."""
        from .accounting import reconcile

        reconcile(self)

    def reconciliation(self) -> pd.DataFrame:
        """Per stretch between two balance readings: what the ledger says was spent, what the
        balance says, and the difference (work done elsewhere, grants, or what is still unknown)."""
        from .accounting import reconciliation

        return reconciliation(self.entries(readings=True))

    def close(self) -> None:
        """Close the file (it reopens on the next entry)."""
        self._store.close()
