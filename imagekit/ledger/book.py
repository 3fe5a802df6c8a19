"""The book: every operation the toolkit performed, what it cost, and its tags, for one account.

Each client feeds its ledger through the recorder (see ``recorder``): every request other than a
read (create, edits, cancellations, prompts) becomes one entry with its time, operation, image ids,
request id, credits charged and where that figure came from, balances after, status, latency and
the tags in effect (``imagekit.tags``); the balances a read shows become ``balance`` entries.
Workflows add what only they can see: refunds of images that failed after an asynchronous create,
and charges of requests whose answer was lost (tagged as the operation was).

A ledger is a SQLite file (default ``$IMAGEKIT_HOME/ledger.sqlite``) or a PostgreSQL database a
team shares (``IMAGEKIT_LEDGER_URL`` or ``ledger="postgresql://..."``; see ``store``). Entries are
keyed by account (a hash of base URL and API key, never the key), so one ledger can serve several
users and services. Budgets per tag value live in it too (see ``budgets``). A SQLite file opens on
the first entry: a client that does nothing writes nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import config as _config
from ..errors import ConfigError
from ..tags import checked_tags
from . import budgets, reconcile as _reconcile
from .budgets import Budget
from .entries import BALANCE, Entry, Source, Status, answered, now
from .store import is_url, open_store, shown_location

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Ledger", "default_path", "ENV_LEDGER_URL"]

ENV_LEDGER_URL = "IMAGEKIT_LEDGER_URL"
"""The ledger every client records into unless told otherwise: a PostgreSQL URL or a SQLite file."""
_COLUMNS = ("time", "account", "operation", "source_id", "image_ids", "request_id", "group_id", "style_id",
            "credits", "balance", "daily_credit", "monthly_credit", "default_credit", "status", "http_status",
            "error", "latency", "source", "tags")


def default_path() -> Path:
    """Where ledgers live unless told otherwise: ``$IMAGEKIT_HOME/ledger.sqlite``."""
    return _config.home_dir() / "ledger.sqlite"


class Ledger:
    """Operations and credits of one account, in a SQLite file or a PostgreSQL database several
    processes and machines share; ``to_pandas()`` reads them back, with their tags."""

    def __init__(self, location: str | os.PathLike[str] | None = None, *, account: str = "") -> None:
        chosen = location if location is not None else os.environ.get(ENV_LEDGER_URL) or default_path()
        location = str(os.fspath(chosen)).removeprefix("sqlite:///")  # a SQLAlchemy-style file URL too
        self._store = open_store(location)
        self.path: Path | None = None if is_url(location) else Path(location)
        """The SQLite file (None for a ledger on PostgreSQL)."""
        self.account = account
        """The account this ledger records and shows ("" shows every account in the ledger)."""

    @property
    def location(self) -> str:
        """The SQLite file or the PostgreSQL URL, password hidden."""
        return shown_location(self._store.location)

    def __repr__(self) -> str:
        return f"Ledger({self.location!r}, account={self.account!r})"

    def for_account(self, account: str) -> Ledger:
        """The same ledger, recording and showing ``account``."""
        twin = Ledger.__new__(Ledger)
        twin._store, twin.path, twin.account = self._store, self.path, account
        return twin

    def record(self, entry: Entry, *, hold: int | None = None) -> Entry:
        """Append one entry (for this ledger's account unless the entry names one); ``hold`` is the
        budget hold it replaces (see ``budgets``)."""
        entry.account = entry.account or self.account
        row = _row(entry)
        with self._store.transaction():
            inserted = self._store.fetchone(
                f"INSERT INTO entries ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) RETURNING seq",
                [row[name] for name in _COLUMNS])
            assert inserted is not None
            entry.seq = int(inserted[0])
            if hold is None:
                pass
            elif entry.credits is None and answered(entry):  # answered, not yet priced:
                self._store.execute("UPDATE holds SET seq = ? WHERE hold_id = ?", (entry.seq, hold))  # held till then
            else:
                self._store.execute("DELETE FROM holds WHERE hold_id = ?", (hold,))
        return entry

    def settle(self, seq: int, credits: float, source: Source) -> None:
        """Give entry ``seq`` its credits, once they are known (its budget hold, if any, goes)."""
        with self._store.transaction():
            self._store.execute("UPDATE entries SET credits = ?, source = ? WHERE seq = ?",
                                (credits, source.value, seq))
            self._store.execute("DELETE FROM holds WHERE seq = ?", (seq,))

    def reading(self, balance: float) -> None:
        """Record a balance the service showed, unless the last entry is the same reading."""
        if self._store.exists():
            last = self._store.fetchone("SELECT operation, balance FROM entries WHERE account = ? "
                                        "ORDER BY seq DESC LIMIT 1", (self.account,))
            if last == (BALANCE, balance):
                return
        self.record(Entry(operation=BALANCE, status=Status.ANSWERED, balance=balance, tags={}))  # untagged: not spending

    def prices(self) -> dict[str, float]:
        """Known prices of this account: ``cost:<CreditCostInfo type>``, ``style:<id>``,
        ``collection:<id>`` -> credits per operation or image."""
        if not self._store.exists():
            return {}
        return dict(self._store.fetchall("SELECT key, credits FROM prices WHERE account = ?", (self.account,)))

    def learn_price(self, key: str, credits: float, source: Source) -> None:
        """Remember a price (``prices``' keys; the newest sighting wins)."""
        self._store.execute("INSERT INTO prices (account, key, credits, source, time) VALUES (?, ?, ?, ?, ?)"
                            " ON CONFLICT (account, key) DO UPDATE SET credits = excluded.credits,"
                            " source = excluded.source, time = excluded.time",
                            (self.account, key, float(credits), source.value, now()))

    def entries(self, account: str | None = None, *, readings: bool = False) -> list[Entry]:
        """Entries of ``account`` (default: this ledger's; "" for all), oldest first; with
        ``readings``, the balance readings among them."""
        account = self.account if account is None else account
        if not self._store.exists():
            return []
        where = [("account = ?", account)] if account else []
        if not readings:
            where.append(("operation != ?", BALANCE))
        query = f"SELECT {', '.join(_COLUMNS)}, seq FROM entries"
        if where:
            query += " WHERE " + " AND ".join(clause for clause, _ in where)
        rows = self._store.fetchall(query + " ORDER BY seq", [value for _, value in where])
        return [_entry(row) for row in rows]

    def created_in_group(self, group_id: str) -> tuple[list[int], float | None]:
        """Images and credits of the answered create that carried ``group_id`` (empty if none)."""
        row = self._store.fetchone(
            "SELECT image_ids, credits FROM entries WHERE account = ? AND group_id = ? AND operation = 'create'"
            " AND image_ids != '[]' ORDER BY seq DESC LIMIT 1", (self.account, group_id))
        return (json.loads(row[0]), row[1]) if row else ([], None)

    def credits_of(self, request_id: str) -> float | None:
        """Credits of this account's operation sent with ``request_id`` (an edit's), when known
        (not of a cancelEdit, whose entry names the request it cancelled)."""
        row = self._store.fetchone("SELECT credits FROM entries WHERE account = ? AND request_id = ? "
                                   "AND operation != 'cancelEdit' ORDER BY seq DESC LIMIT 1", (self.account, request_id))
        return row[0] if row else None

    def max_image_id(self) -> int | None:
        """The highest image id this account's entries name."""
        ids = [i for entry in self.entries() for i in entry.image_ids]
        return max(ids, default=None)

    def total(self, account: str | None = None) -> float:
        """Credits charged, net of refunds."""
        return sum(entry.credits or 0 for entry in self.entries(account))

    def to_pandas(self, account: str | None = None) -> pd.DataFrame:
        """The entries as a DataFrame (default: this ledger's account; "" for all) with ``time``
        parsed, ``tags`` (a dict per entry) and a ``tag_<name>`` column per tag name that occurs."""
        import pandas as pd

        frame = pd.DataFrame([_row(entry, json_columns=False) for entry in self.entries(account)], columns=list(_COLUMNS))
        frame["time"] = pd.to_datetime(frame["time"], utc=True, format="ISO8601")
        for name in sorted({name for tags in frame["tags"] for name in tags}):
            frame[f"tag_{name}"] = frame["tags"].map(lambda tags, name=name: tags.get(name))
        return frame.astype({"source_id": "Int64", "style_id": "Int64", "http_status": "Int64"})  # integers beside gaps

    # --- budgets per tag value (see ``budgets``) ----------------------------------------------

    def set_budget(self, tag: Mapping[str, object] | None = None, /, *, limit: float, warn_at: float | None = 0.8,
                   hard: bool = True, **tag_values: object) -> Budget:
        """Cap the credits one tag value may spend, across every account and machine writing to
        this ledger: ``set_budget(experiment="grid-a", limit=50)``. ``hard`` refuses new work past
        the limit (BudgetExceededError); ``warn_at`` (a share) warns first. Replaces an earlier one."""
        key, value = _one_tag(tag, tag_values)
        budgets.define(self._store, key, value, limit, warn_at, hard)
        return budgets.status(self._store, key, value)[0]

    def remove_budget(self, tag: Mapping[str, object] | None = None, /, **tag_values: object) -> None:
        """Drop the budget of one tag value (what it spent stays recorded)."""
        budgets.remove(self._store, *_one_tag(tag, tag_values))

    def budgets(self, key: str | None = None) -> list[Budget]:
        """Every budget (or those of tag ``key``), with what is spent and held now."""
        return budgets.status(self._store, key)

    def hold(self, tags: dict[str, str], cost: float) -> int | None:
        """Hold ``cost`` credits against the budgets of ``tags`` before sending an operation (None
        when none applies); BudgetExceededError when a hard one would be passed."""
        return budgets.hold(self._store, self.account, tags, cost)

    def reconcile(self) -> None:
        """Give entries whose credits are unknown the credits the balances show (see ``reconcile``)."""
        settlement = _reconcile.settle(self.entries(readings=True))
        for seq, credits in settlement.credits.items():
            self.settle(seq, credits, Source.RECONCILED)
        for key, credits in settlement.prices.items():
            self.learn_price(key, credits, Source.RECONCILED)

    def reconciliation(self) -> pd.DataFrame:
        """Per stretch between two balance readings: what the ledger says was spent, what the
        balance says, and the difference (work done elsewhere, grants, or what is still unknown)."""
        return _reconcile.reconciliation(self.entries(readings=True))

    def close(self) -> None:
        """Close the connection (it reopens on the next entry)."""
        self._store.close()


def _one_tag(tag: Mapping[str, object] | None, tag_values: Mapping[str, object]) -> tuple[str, str]:
    """The one ``name=value`` a budget is for."""
    given = checked_tags({**(tag or {}), **tag_values})
    if len(given) != 1 or None in given.values():
        raise ConfigError(f"a budget is for one tag value, e.g. experiment='grid-a' (got {given or 'none'})")
    [(key, value)] = given.items()
    assert value is not None
    return key, value


def _row(entry: Entry, json_columns: bool = True) -> dict[str, Any]:
    """``entry`` as a row: names as text, and (for the database) lists and tags as JSON."""
    row = {**asdict(entry), "status": Status(entry.status).value,
           "source": Source(entry.source).value if entry.source else None}
    if json_columns:
        row.update(image_ids=json.dumps(entry.image_ids), tags=json.dumps(entry.tags, sort_keys=True))
    return row


def _entry(row: tuple[Any, ...]) -> Entry:
    """An entry read back from its row (``_COLUMNS`` then ``seq``)."""
    values = dict(zip((*_COLUMNS, "seq"), row, strict=True))
    return Entry(**{**values, "status": Status(values["status"]), "source": values["source"] and Source(values["source"]),
                    "image_ids": json.loads(values["image_ids"]), "tags": json.loads(values["tags"] or "{}")})
