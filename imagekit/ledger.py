"""The credit ledger: a SQLite record of every operation the toolkit performed, and what it cost.

Each client feeds its ledger from the HTTP layer: every request other than a read (create, edits,
cancellations, prompts) becomes one entry with its time, operation, image ids, request id, credits
charged, balances after, status and latency. Workflows add what only they can see: refunds of
images that failed after an asynchronous create, and charges of requests whose answer was lost.

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
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import config as _config

if TYPE_CHECKING:
    import pandas as pd

    from ._http import Call, Hook, Response
    from .config import Config

__all__ = ["Ledger", "Entry", "account_of", "default_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL, account TEXT NOT NULL, operation TEXT NOT NULL,
    source_id INTEGER, image_ids TEXT NOT NULL, request_id TEXT, group_id TEXT, style_id INTEGER,
    credits REAL, balance REAL, daily_credit REAL, monthly_credit REAL, default_credit REAL,
    status TEXT NOT NULL, error TEXT, latency REAL
);
CREATE INDEX IF NOT EXISTS entries_account ON entries (account, time);
"""
_COLUMNS = ("time", "account", "operation", "source_id", "image_ids", "request_id", "group_id", "style_id",
            "credits", "balance", "daily_credit", "monthly_credit", "default_credit", "status", "error",
            "latency")
_EDIT_PATH = re.compile(r"^/api/images/(\d+)/(\w+)$")


def default_path() -> Path:
    """Where ledgers live unless told otherwise: ``$IMAGEKIT_HOME/ledger.sqlite``."""
    return _config.home_dir() / "ledger.sqlite"


def account_of(base_url: str, api_key: str) -> str:
    """A stable, non-secret id for one account on one service."""
    return hashlib.sha256(f"{base_url.rstrip('/')}\0{api_key}".encode()).hexdigest()[:16]


@dataclass
class Entry:
    """One operation as the ledger stores it."""

    operation: str
    """create, an edit name (enhance, removeBg...), cancelEdit, textToPrompt, refund, reconcile..."""
    status: str
    """HTTP status of the answer, or ``no_response``."""
    account: str = ""
    time: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="milliseconds"))
    source_id: int | None = None
    """The image an edit started from."""
    image_ids: list[int] = field(default_factory=list)
    """Images the operation made."""
    request_id: str | None = None
    group_id: str | None = None
    style_id: int | None = None
    credits: float | None = None
    """Credits charged (negative for a refund); None when the service did not say."""
    balance: float | None = None
    """Total balance after the operation, when known."""
    daily_credit: float | None = None
    monthly_credit: float | None = None
    default_credit: float | None = None
    error: str | None = None
    latency: float | None = None


def operation_of(path: str) -> str | None:
    """The ledger's name for a request path; None for paths that are not operations."""
    if path == "/api/images/create":
        return "create"
    if path.startswith("/api/images/cancelEdit/"):
        return "cancelEdit"
    if path in ("/api/images/textToPrompt", "/api/images/imageToPrompt"):
        return path.rsplit("/", 1)[1]
    match = _EDIT_PATH.match(path)
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
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
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
            self._store.db().execute(
                f"INSERT INTO entries ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                [row[name] for name in _COLUMNS])
        return entry

    def entries(self, account: str | None = None) -> list[Entry]:
        """Entries of ``account`` (default: this ledger's; "" for all), oldest first."""
        account = self.account if account is None else account
        if not self.path.exists():
            return []
        query = f"SELECT {', '.join(_COLUMNS)} FROM entries"
        with self._store.lock:
            db = self._store.db()
            rows = (db.execute(query + " WHERE account = ? ORDER BY seq", (account,)) if account
                    else db.execute(query + " ORDER BY seq")).fetchall()
        return [Entry(**{**dict(zip(_COLUMNS, row)), "image_ids": json.loads(row[4])}) for row in rows]

    def created_in_group(self, group_id: str) -> tuple[list[int], float | None]:
        """Images and credits of the answered create that carried ``group_id`` (empty if none)."""
        with self._store.lock:
            row = self._store.db().execute(
                "SELECT image_ids, credits FROM entries WHERE account = ? AND group_id = ? AND operation = 'create'"
                " AND image_ids != '[]' ORDER BY seq DESC LIMIT 1", (self.account, group_id)).fetchone()
        return (json.loads(row[0]), row[1]) if row else ([], None)

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
        return frame

    def hook(self, config: Config) -> Hook:
        """An HTTP hook recording every operation a client with ``config`` performs (reads are not)."""

        def observe(call: Call, response: Response | None, error: BaseException | None, seconds: float) -> None:
            operation = operation_of(call.path)
            if call.method != "GET" and operation is not None:
                self.record(entry_for(config, call, response, error, seconds, operation))

        return observe

    def close(self) -> None:
        """Close the file (it reopens on the next entry)."""
        self._store.close()


def entry_for(config: Config, call: Call, response: Response | None, error: BaseException | None,
              seconds: float, operation: str) -> Entry:
    """The ledger entry of one finished request."""
    from ._http import charge_of  # here: reading a ledger (reports, the CLI) needs no HTTP stack

    wire, body = config.wire, call.json if isinstance(call.json, dict) else {}
    edit = _EDIT_PATH.match(call.path)
    entry = Entry(operation=operation, status="no_response", latency=round(seconds, 4),
                  source_id=int(edit.group(1)) if edit else None,
                  request_id=_header(call, wire.request_id_header), group_id=body.get(wire.group_id),
                  style_id=body.get(wire.style_id))
    if error is not None:
        entry.status = str(getattr(error, "status", None) or "no_response")
        entry.error = getattr(error, "data", None) or type(error).__name__
        if getattr(error, "may_have_executed", False):
            entry.error += " (may have run)"
        return entry
    assert response is not None
    entry.status = str(response.status_code)
    charged, remaining = (_float(x) for x in charge_of(response, config))
    entry.credits, entry.balance = charged, remaining
    try:
        payload = json.loads(response.content) if response.content else None
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        images = payload.get("images") or ([payload["image"]] if isinstance(payload.get("image"), dict) else [])
        entry.image_ids = [int(i["imageId"]) for i in images if isinstance(i, dict) and i.get("imageId")]
        for name in ("dailyCredit", "monthlyCredit", "defaultCredit"):
            if isinstance(payload.get(name), (int, float)):
                setattr(entry, _snake(name), float(payload[name]))
        if entry.balance is None and entry.default_credit is not None:
            entry.balance = (entry.daily_credit or 0) + (entry.monthly_credit or 0) + entry.default_credit
    return entry


def _header(call: Call, name: str) -> str | None:
    return next((value for key, value in (call.headers or {}).items() if key.lower() == name.lower()), None)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
