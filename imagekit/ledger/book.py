"""The book: every operation the toolkit performed, what it cost, and its tags, for one account.

Each client feeds its ledger through the recorder (see ``recorder``): every request other than a
read (create, edits, cancellations, prompts) becomes one entry with its time, operation, image ids,
request id, credits charged and where that figure came from, balances after, status, latency and
the tags in effect (``imagekit.tags``); the balances a read shows become ``balance`` entries.
Workflows add what only they can see: refunds of images that failed after an asynchronous create,
and charges of requests whose answer was lost (tagged as the operation was).

A ledger is a SQLite file (default ``$IMAGEKIT_HOME/ledger.sqlite``) or a PostgreSQL database a
team shares (``IMAGEKIT_LEDGER_URL`` or ``ledger="postgresql://..."``; see ``store``). Entries are
keyed by account, so one ledger can serve several users and services: a user on a service (a hash of
the service's identity and the user's id, the same for every key the user has), known from the first
time the service says whose the key is (``me()``); until then by a hash of base URL and API key (never
the key), which then becomes another name of the user's account (``adopt``). Budgets per tag value
(or per account) live in it too, with the alerts they sent
(see ``budgets`` and ``alerts``). A SQLite file opens on the first entry: a client that does nothing
writes nothing.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import BudgetExceededError, ConfigError, LedgerUnavailableError
from ..extras import needs_extra
from ..home import home_dir
from . import alerts as _alerts, budgets, export as _export, forecasts, reconcile as _reconcile
from .alerts import Alert
from .budgets import KEPT, Budget
from .columns import COLUMNS, checked, entry_of, row_of, warn_unreadable
from .entries import BALANCE, Entry, Source, Status, now
from .export import Moment, SpendExport
from .outage import Keeper, Written, entries_text
from .spool import spool_for
from .store import checked_location, is_url, open_store
from .writer import writer_for
from .writes import WRITES, aliases, insert, name_account, set_credits, upsert_price

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Ledger", "default_path", "ENV_LEDGER_URL"]

ENV_LEDGER_URL = "IMAGEKIT_LEDGER_URL"
"""The ledger every client records into unless told otherwise: a PostgreSQL URL or a SQLite file."""
T = TypeVar("T")
U = TypeVar("U")
log = logging.getLogger("imagekit")


def default_path(keeping: bool = False) -> Path:
    """Where ledgers live unless told otherwise: ``$IMAGEKIT_HOME/ledger.sqlite`` (``keeping``: a
    ledger to write, in a home that can be written, else one line)."""
    return home_dir("its ledger (ledger=False in Python keeps none)" if keeping else None) / "ledger.sqlite"


class Ledger:
    """Operations and credits of one account, in a SQLite file or a PostgreSQL database several
    processes and machines share; ``to_pandas()`` reads them back, with their tags.

    While a shared database cannot be reached, writes wait in a local spool (see ``outage`` and
    ``spool``) and go to the database, exactly once, when it answers again: the work is never stopped by its
    bookkeeping. Reading entries back needs the database (LedgerUnavailableError meanwhile)."""

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

    def for_account(self, account: str) -> Ledger:
        """The same ledger, recording and showing ``account``."""
        twin = Ledger.__new__(Ledger)
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

    def record(self, entry: Entry, *, hold: int | None = None) -> Entry:
        """Append one entry (for this ledger's account unless the entry names one); ``hold`` is the
        budget hold it replaces (see ``budgets``). An entry that waits in the spool has no ``seq``."""
        entry.account = entry.account or self.account
        for note in checked(entry):  # held to what its columns mean: a bad value never poisons the ledger
            log.debug("ledger entry of %s: %s; kept as null", entry.operation, note)
        row = {**row_of(entry), "hold": hold}
        seq = self._write("entry", row, lambda: insert(self._store, row), uid=entry.uid)
        entry.seq = seq if isinstance(seq, int) else None
        if entry.seq is not None and entry.credits:
            self._alert([(entry.tags, entry.account, entry.time)])
        if entry.seq is not None and self._spool:  # what binds untagged work, learned off its path (see ``hold``)
            self._spool.remember("budgets", lambda: budgets.known(self._store))
            self._spool.remember("aliases", self._learn_aliases)  # names other processes gave accounts
        return entry

    def settle(self, entry: Entry, credits: float, source: Source) -> None:
        """Give ``entry`` its credits, once they are known (its budget hold, if any, goes)."""
        if entry.seq is not None:
            self._write("settle", {"seq": entry.seq, "credits": credits, "source": source.value},
                        lambda: set_credits(self._store, "seq", entry.seq, credits, source.value))
        elif entry.uid is not None and not (self._spool and self._spool.settle(entry.uid, credits, source.value)):
            self._write("settle", {"uid": entry.uid, "credits": credits, "source": source.value},
                        lambda: set_credits(self._store, "uid", entry.uid, credits, source.value))
        if credits:
            self._alert([(entry.tags, entry.account or self.account, entry.time)])

    def _alert(self, spent: Sequence[tuple[dict[str, str], str, str]]) -> list[Alert]:
        """Send the alerts that spending under these (tags, account, time) reached (see ``alerts``);
        while the database cannot be reached, none: the write that reaches it sends them."""
        def check() -> list[Alert]:
            return [alert for tags, account, time in spent
                    for alert in _alerts.check(self._store, tags, account, _moment(time, self.clock))]

        return self._read(check, list)

    def price_create(self, group_id: str, credits: float) -> None:
        """Give the create that carried ``group_id`` what its images' metadata showed it cost (``priced``),
        unless its answer reported it: a share the reconciliation gave it is corrected."""
        payload = {"account": self.account, "group_id": group_id, "credits": float(credits),
                   "source": Source.PRICED.value}
        self._write("settle", payload, lambda: WRITES["settle"](self._store, payload))

    def reading(self, balance: float) -> None:
        """Record a balance the service showed, unless the last entry is the same reading."""
        last = self._read(lambda: self._store.fetchone("SELECT operation, balance FROM entries WHERE account = ? "
                                                       "ORDER BY seq DESC LIMIT 1", (self.account,)), lambda: None)
        if last != (BALANCE, balance):
            self.record(Entry(operation=BALANCE, status=Status.ANSWERED, balance=balance, tags={}))  # untagged

    def prices(self) -> dict[str, float]:
        """Known prices of this account: ``cost:<CreditCostInfo type>``, ``style:<id>``,
        ``collection:<id>`` -> credits per operation or image (the last known while the database
        cannot be reached)."""
        def read() -> dict[str, float]:
            self._learn_aliases()
            known = dict(self._store.fetchall("SELECT key, credits FROM prices WHERE account = ?", (self.account,)))
            if self._spool:  # what estimates use while the database cannot be asked
                self._spool.remember(f"prices:{self.account}", lambda: known)
            return known

        def meanwhile() -> dict[str, float]:  # as last read, with those learned since
            assert self._spool is not None
            known = self._spool.recall(f"prices:{self.account}") or {}
            return {**known, **{row["key"]: row["credits"] for row in self._spool.waiting("price", self.account)}}

        return self._read(read, meanwhile)

    def learn_price(self, key: str, credits: float, source: Source) -> None:
        """Remember a price (``prices``' keys; the newest sighting wins)."""
        row = {"account": self.account, "key": key, "credits": float(credits), "source": source.value, "time": now()}
        self._write("price", row, lambda: upsert_price(self._store, row))

    def entries(self, account: str | None = None, *, readings: bool = False) -> list[Entry]:
        """Entries of ``account`` (default: this ledger's; "" for all), oldest first; with
        ``readings``, the balance readings among them."""
        self.flush()
        if not self._store.exists():
            return []
        self._learn_aliases()  # another process may have learnt whose this ledger's key is
        account = self.account if account is None else account
        where = [("account = ?", account)] if account else []
        if not readings:
            where.append(("operation != ?", BALANCE))
        query = f"SELECT {', '.join(COLUMNS)}, seq FROM entries"
        if where:
            query += " WHERE " + " AND ".join(clause for clause, _ in where)
        rows = self._store.fetchall(query + " ORDER BY seq", [value for _, value in where])
        found = [entry_of(row) for row in rows]
        warn_unreadable(self.location, [entry for entry in found if entry.unreadable])
        return found

    def created_in_group(self, group_id: str) -> tuple[list[int], float | None]:
        """Images and credits of the answered create that carried ``group_id`` (empty if none)."""
        def waiting() -> tuple[list[int], float | None]:
            found = [e for e in self._waiting() if e["group_id"] == group_id and e["operation"] == "create"
                     and e["image_ids"] != "[]"]
            return (json.loads(found[-1]["image_ids"]), found[-1]["credits"]) if found else ([], None)

        def read() -> tuple[list[int], float | None]:
            row = self._store.fetchone(
                "SELECT image_ids, credits FROM entries WHERE account = ? AND group_id = ? AND operation = 'create'"
                " AND image_ids != '[]' ORDER BY seq DESC LIMIT 1", (self.account, group_id))
            return (json.loads(row[0]), row[1]) if row else ([], None)

        return self._read(read, waiting)

    def credits_of(self, request_id: str) -> float | None:
        """Credits of this account's operation sent with ``request_id`` (an edit's), when known
        (not of a cancelEdit, whose entry names the request it cancelled)."""
        def waiting() -> float | None:
            found = [e for e in self._waiting() if e["request_id"] == request_id and e["operation"] != "cancelEdit"]
            return found[-1]["credits"] if found else None

        def read() -> float | None:
            row = self._store.fetchone("SELECT credits FROM entries WHERE account = ? AND request_id = ? "
                                       "AND operation != 'cancelEdit' ORDER BY seq DESC LIMIT 1",
                                       (self.account, request_id))
            return row[0] if row else None

        return self._read(read, waiting)

    def max_image_id(self) -> int | None:
        """The highest image id this account's entries name (those waiting in the spool included)."""
        ids = [i for entry in self._read(self.entries, list) for i in entry.image_ids]  # none while unreachable
        return max([*ids, *(i for waiting in self._waiting() for i in json.loads(waiting["image_ids"]))], default=None)

    def total(self, account: str | None = None) -> float:
        """Credits charged, net of refunds."""
        return sum(entry.credits or 0 for entry in self.entries(account))

    def export(self, dest: str | os.PathLike[str], format: str = "csv", *, account: str | None = None,
               overwrite: bool = False, credit_price: float | None = None, currency: str | None = None,
               since: Moment = None, until: Moment = None) -> SpendExport:
        """Write one row per charge, with its tags, to the file ``dest`` (a path or any fsspec URL):
        ``format`` ``csv``, ``parquet`` or ``focus`` (FinOps FOCUS 1.0, its costs ``credit_price``
        per credit in ``currency``, USD unless given); entries of ``account`` (default: this ledger's; "" for all)
        made ``since`` and before ``until`` (dates or times, UTC unless they say). An existing
        file is replaced only with ``overwrite`` (see ``export``)."""
        start, end = _export.moment(since), _export.moment(until)
        if account:
            self._refuse_unknown_account(account)
        return _export.write(lambda: self.entries(account), dest, format, overwrite=overwrite, credit_price=credit_price,
                             currency=currency, since=start, until=end)

    def _refuse_unknown_account(self, account: str) -> None:
        """ConfigError, naming the accounts there are, for an account the ledger has no entry of."""
        known = sorted({entry.account for entry in self.entries("", readings=True)})
        if account not in known:
            shown = ", ".join(known[:5]) + (f" and {len(known) - 5} more" if len(known) > 5 else "")
            raise ConfigError(f"the ledger at {self.location} has no account {account!r}; "
                              + (f"its accounts: {shown}" if known else "it has no entries yet"))

    def to_pandas(self, account: str | None = None) -> pd.DataFrame:
        """The entries as a DataFrame (default: this ledger's account; "" for all) with ``time``
        parsed, ``tags`` (a dict per entry) and a ``tag_<name>`` column per tag name that occurs."""
        with needs_extra():  # a missing extra: one line naming it
            import pandas as pd

        frame = pd.DataFrame([row_of(entry, json_columns=False) for entry in self.entries(account)],
                             columns=[*COLUMNS, "unreadable"])
        frame["time"] = pd.to_datetime(frame["time"], utc=True, format="ISO8601", errors="coerce")
        for name in sorted({name for tags in frame["tags"] for name in tags}):
            frame[f"tag_{name}"] = frame["tags"].map(lambda tags, name=name: tags.get(name))
        return frame.astype({"source_id": "Int64", "style_id": "Int64", "http_status": "Int64"})  # integers beside gaps

    # --- budgets per tag value (see ``budgets``) ----------------------------------------------

    def set_budget(self, tag: Mapping[str, object] | None = None, /, *, limit: float, warn_at: float | None = KEPT,
                   hard: bool = KEPT, alerts: Sequence[float] | None = KEPT, period: str | None = KEPT,
                   tz: str = KEPT, on_alert: Callable[[Alert], object] | None = None, webhook: str | None = KEPT,
                   **tag_values: object) -> Budget:
        """Cap the credits one tag value may spend, across every account and machine writing to
        this ledger: ``set_budget(experiment="grid-a", limit=50)``; with no tag, this ledger's account
        (every account's when it has none). ``hard`` refuses new work past the limit
        (BudgetExceededError); ``warn_at`` (a share) warns this process first (BudgetWarning).
        ``period`` (``day``, ``week``, ``month`` in ``tz``, or a plan month: ``ik.budget(period="plan")``
        makes one) counts spending per period, the limit resetting at each turn (None: all time).
        ``alerts`` (shares) are sent once per share and period, ledger-wide: a log line, a notebook banner, ``on_alert(alert)`` in this process, and
        a JSON POST to ``webhook`` (see ``alerts``). Set again, a budget changes what is given and
        keeps what is not (raising a limit keeps the period, alerts, webhook and
        ``on_alert``); a new budget's defaults are ``warn_at=0.8``, hard, alerts at 50, 80 and 100 %,
        all time (no period), UTC and no webhook (``budgets.NEW``)."""
        key, value = self._budget_of(tag, tag_values)
        if on_alert is not None and not callable(on_alert):
            raise ConfigError(f"on_alert is a function called with each Alert (e.g. on_alert=print), not {on_alert!r}")
        chosen = budgets.settled(self._store, key, value, {"warn_at": warn_at, "hard": hard, "alerts": alerts,
                                                             "period": period, "tz": tz, "webhook": webhook})
        budgets.define(self._store, key, value, limit, **chosen)
        if on_alert is not None:
            _alerts.register(self._store.location, key, value, on_alert)
        if self._spool:
            self._spool.remember("budgets", lambda: budgets.known(self._store), now=True)
        self._settled()
        return budgets.status(self._store, key, value, self.clock())[0]

    def _budget_of(self, tag: Mapping[str, object] | None, tag_values: Mapping[str, object]) -> tuple[str, str]:
        """(key, value) of the budget named: a tag value's, or (``""``, account) with none."""
        if not tag and not tag_values:
            return "", self.account
        return budgets.one_tag(tag, tag_values)

    def remove_budget(self, tag: Mapping[str, object] | None = None, /, **tag_values: object) -> None:
        """Drop the budget of one tag value, or of this ledger's account (what it spent stays recorded)."""
        key, value = self._budget_of(tag, tag_values)
        budgets.remove(self._store, key, value)
        _alerts.register(self._store.location, key, value, None)

    def budgets(self, key: str | None = None) -> list[Budget]:
        """Every budget (or those of tag ``key``; ``""``: of accounts), with what is spent (this
        period) and held now."""
        self._settled()
        return budgets.status(self._store, key, at=self.clock())

    def hold(self, tags: dict[str, str], cost: float | Callable[[], float]) -> int | None:
        """Hold ``cost`` credits (or what ``cost()`` estimates, asked only when a budget applies) against
        the budgets of ``tags`` and this ledger's account before sending an operation (None when none
        applies); BudgetExceededError when a hard one would be passed, or could be and the database
        cannot be asked (a budget is never passed on a guess)."""
        if not tags and self._spool and not self._account_bound():
            return None

        def unchecked() -> None:
            known = self._spool.recall("budgets") if self._spool else None
            if tags or known:
                budgets.refuse_unchecked(known, tags, cost() if callable(cost) else cost, self.location, self.account)

        def check() -> int | None:
            at = self.clock()
            self._learn_aliases()  # the account's budget may be the user's, named by another process
            try:
                held = budgets.hold(self._store, self.account, tags, cost, at)
            except BudgetExceededError as exc:
                if isinstance(exc.budget, Budget):  # full for work: its alerts up to 100 % are due
                    _alerts.full(self._store, exc.budget, at, exc.cost)
                raise
            if self._spool:  # what a hard budget says while the database cannot be asked
                self._spool.remember("budgets", lambda: budgets.known(self._store))
            return held

        return self._read(check, unchecked)

    def _account_bound(self) -> bool:
        """Whether a budget of this ledger's account is known here. Untagged work on a shared ledger
        asks its database only then, for it must never wait on it: what is known is kept fresh by
        the writer, off the requests' path (``record``), and by ``set_budget`` at once."""
        assert self._spool is not None
        known = self._spool.recall("budgets") or []
        return any(not key and value in (self.account, self._account, "") for key, value, _, _ in known)

    def reconcile(self) -> None:
        """Give entries whose credits are unknown the credits the balances show (see ``reconcile``).
        While the database cannot be reached, nothing: the next reconciliation does it."""
        entries = self._read(lambda: self.entries(readings=True), list)
        by_seq = {entry.seq: entry for entry in entries}
        settlement = _reconcile.settle(entries)
        for seq, credits in settlement.credits.items():
            self.settle(by_seq[seq], credits, Source.RECONCILED)
        for key, credits in settlement.prices.items():
            self.learn_price(key, credits, Source.RECONCILED)

    def reconciliation(self) -> pd.DataFrame:
        """Per stretch between two balance readings: what the ledger says was spent, what the
        balance says, and the difference (work done elsewhere, grants, or what is still unknown)."""
        return _reconcile.reconciliation(self.entries(readings=True))

    def forecast(self, by: str | None = None, *, period: str | None = "month", tz: str = "UTC", days: float = 7.0,
                 balance: float | None = None, now: datetime | None = None) -> pd.DataFrame:
        """Per value of tag ``by`` (every account's spending, as budgets count it) and for this
        ledger's account (row ``(account)``): ``spent`` this period, ``per_day`` (the recent rate),
        the budget's ``limit`` and what is ``left`` of it this period (the account's: the least of
        its budget's and its balance, the last reported unless given), when it ``resets`` and when
        it ``runs_out``, counting the reset, and the ``history`` the rate follows (a rate and a date
        need a day of it; see ``forecasts``).
        ``period`` (day, week, month in time zone ``tz``; None: never) is for the rows without a
        budget; a budget counts in its own, as it is enforced (one without a period never resets). Entries whose credits are unknown first get those the balances show
        (``reconcile``), as in the usage report."""
        if self.account:
            self.reconcile()
        balance = balance if balance is not None else (
            forecasts.balance_now(self.entries(readings=True)) if self.account else None)
        bound = [*self.budgets(by), *self.budgets("")] if by else self.budgets("")  # a tag's, and the account's
        frame = self.to_pandas(account="")
        if by is not None:
            forecasts.refuse_unknown_tag(frame, by, bound, self.location)
        return forecasts.forecast(frame, bound, by=by,
                                  account=self.account, balance=balance, period=period, tz=tz, days=days, now=now)

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

