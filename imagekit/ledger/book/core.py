"""The book's core: where a ledger keeps its entries (a store; for a shared one, the spool and
the writer that carry it through an outage), whose they are (the account and its other names), and
how it writes and reads."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TypeVar

from ...errors import LedgerUnavailableError
from ...home import home_dir
from .. import alerts as _alerts
from ..alerts import Alert
from ..entries import now
from ..outage import Keeper, Written, entries_text
from ..spool import spool_for
from ..store import ENV_LEDGER_URL, checked_location, is_url, open_store
from ..writer import writer_for
from ..writes import aliases, name_account

T = TypeVar("T")
U = TypeVar("U")


def default_path(keeping: bool = False) -> Path:
    """Where ledgers live unless told otherwise: ``$IMAGEKIT_HOME/ledger.sqlite`` (``keeping``: a
    ledger to write, in a home that can be written, else one line)."""
    return home_dir("its ledger (ledger=False in Python keeps none)" if keeping else None) / "ledger.sqlite"


class Book:
    """A ledger's store, account and outage handling, which the other parts write and read through."""

    def __init__(self, location: str | os.PathLike[str] | None = None, *, account: str = "",
                 clock: Callable[[], datetime] | None = None) -> None:
        chosen = location if location is not None else os.environ.get(ENV_LEDGER_URL)
        # the default's folder is ours to make; a location given must name a folder that exists
        location = str(default_path(keeping=True)) if chosen is None else checked_location(chosen)
        self._store = open_store(location)
        self.path: Path | None = None if is_url(location) else Path(location)
        """The SQLite file (None for a ledger on PostgreSQL)."""
        self._account = account
        self._spool = None if self.path else spool_for(self._store.location)
        self._aliases: dict[str, str] = self._known_aliases()
        """Other names of accounts (an id made from an API key -> the user's), shared with twins."""
        self._keeper = Keeper(self._store, self._spool, writer_for(str(self._spool.path)) if self._spool else None,
                              self._alert_written)
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        """What time it is for budgets' periods (tests give their own)."""

    @property
    def location(self) -> str:
        """The SQLite file or the PostgreSQL URL, password hidden."""
        return self._keeper.location

    @property
    def spool(self) -> Path | None:
        """The local file where writes wait while the database cannot be reached (None for SQLite)."""
        return self._spool.path if self._spool else None

    def __repr__(self) -> str:
        return f"Ledger({self.location!r}, account={self.account!r})"

    @property
    def account(self) -> str:
        """The account this ledger records and shows ("" shows every account in the ledger)."""
        return self._aliases.get(self._account, self._account)

    def for_account(self, account: str) -> Self:
        """The same ledger, recording and showing ``account``."""
        twin = type(self).__new__(type(self))
        twin._store, twin.path, twin._account, twin._spool = self._store, self.path, account, self._spool
        twin._keeper, twin.clock, twin._aliases = self._keeper, self.clock, self._aliases
        return twin

    def adopt(self, account: str) -> None:
        """Know this ledger's account (an id made from the API key: ``account_of``) as ``account``, the
        user's on the service (``user_account``), from now on and in every process: what the ledger
        holds under the key's id becomes the user's (see ``writes.name_account``)."""
        alias = self._account
        if not alias or alias == account or self._aliases.get(alias) == account:
            return
        self._aliases[alias] = account
        row = {"alias": alias, "account": account, "time": now()}
        self._write("alias", row, lambda: name_account(self._store, row))
        if self._spool:  # what a process on this machine opening the ledger knows at once, and the prices
            self._spool.remember("aliases", lambda: dict(self._aliases), now=True)  # estimates use meanwhile
            if (prices := self._spool.recall(f"prices:{alias}")) is not None:
                self._spool.remember(f"prices:{account}", lambda: prices, now=True)

    def _learn_aliases(self) -> dict[str, str]:
        """The store's other names of accounts, known here from now on (read where the store is read
        anyway: a client that does nothing opens nothing; once this ledger's own is known, never again)."""
        if self._account and self._account not in self._aliases and self._store.exists():
            self._aliases.update(aliases(self._store))
        return dict(self._aliases)

    def _known_aliases(self) -> dict[str, str]:
        """The other names of accounts known before the store is opened: what this machine last saw of
        a shared database's (none for a SQLite file, which is read when it is opened)."""
        return dict(self._spool.recall("aliases") or {}) if self._spool is not None else {}

    def later(self, job: Callable[[], object]) -> None:
        """Do ``job`` (bookkeeping) on the writer's thread for a shared ledger, whose database may stop
        answering (see ``writer``); at once for a SQLite file. Reads wait for it first."""
        self._keeper.later(job)

    def waiting(self) -> int:
        """How many entries wait in this machine's spool for the database (0 for a SQLite ledger)."""
        return self._keeper.waiting()

    def flush(self) -> int:
        """Write what waits in this machine's spool now; how many entries waited.
        LedgerUnavailableError while the database cannot be reached."""
        waited = self.waiting()
        try:
            self._keeper.flush()
        except LedgerUnavailableError as exc:  # a report that knows entries wait here says so
            if waited:
                raise LedgerUnavailableError(f"{exc} ({entries_text(waited)} of this machine wait in {self.spool})") from exc
            raise
        return waited

    def close(self) -> None:
        """Write what waits in the spool, trying for up to ``outage.CLOSE_SECONDS`` while the database
        cannot be reached, then say in one line how many entries still wait and where; close the
        connection (it reopens on the next entry). The end of the process does the same for what waits."""
        self._keeper.leave()
        self._store.close()

    def _write(self, kind: str, payload: dict[str, Any], write: Callable[[], T], uid: str | None = None) -> T | None:
        """``write`` to the database; while it cannot be reached, keep ``payload`` in the spool."""
        return self._keeper.write(kind, self.account, payload, write, uid)

    def _read(self, read: Callable[[], T], meanwhile: Callable[[], U]) -> T | U:
        """``read`` from the database; while it cannot be reached, what ``meanwhile`` does."""
        return self._keeper.read(read, meanwhile)

    def _waiting(self) -> list[dict[str, Any]]:
        """This account's entries that wait in the spool, as rows."""
        return self._keeper.waiting_entries(self.account)

    def _settled(self) -> None:
        """Wait (for a bounded time) for the bookkeeping given to the writer so far."""
        self._keeper.settled()

    def _alert(self, spent: Sequence[tuple[dict[str, str], str, str]]) -> list[Alert]:
        """Send the alerts that spending under these (tags, account, time) reached (see ``alerts``);
        while the database cannot be reached, none: the write that reaches it sends them."""
        def check() -> list[Alert]:
            return [alert for tags, account, time in spent
                    for alert in _alerts.check(self._store, tags, account, _moment(time, self.clock))]

        return self._read(check, list)

    def _alert_written(self, written: Written) -> None:
        """Send the alerts that waited in the spool with the entries (and settlements) just written."""
        spent = {(payload["tags"], payload["account"], payload["time"]) for kind, payload in written
                 if kind == "entry" and payload.get("credits")}
        for kind, payload in written:  # and those of the entries settled meanwhile
            if kind == "settle" and payload["credits"]:
                by = next(key for key in ("uid", "seq", "group_id") if key in payload)  # see WRITES["settle"]
                if row := self._store.fetchone(f"SELECT tags, account, time FROM entries WHERE {by} = ?",
                                               (payload[by],)):
                    spent.add((row[0], row[1], row[2]))
        for tags, account, at in sorted(spent):
            _alerts.check(self._store, json.loads(tags), account, _moment(at, self.clock))


def _moment(time: str, clock: Callable[[], datetime]) -> datetime:
    """An entry's time as a datetime (the clock's time when it cannot be read)."""
    try:
        found = datetime.fromisoformat(time)
    except (TypeError, ValueError):
        return clock()
    return found if found.tzinfo else found.replace(tzinfo=UTC)

