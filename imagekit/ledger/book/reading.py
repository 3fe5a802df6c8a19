"""What a book tells: its entries as a list or a DataFrame, totals, exports, the reconciliation
with the balances the service reported, and forecasts."""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import TYPE_CHECKING

from ...errors import ConfigError
from ...extras import needs_extra
from .. import export as _export, forecasts, reconcile as _reconcile
from ..columns import COLUMNS, entry_of, row_of, warn_unreadable
from ..entries import BALANCE, Entry, Source
from ..export import Moment, SpendExport
from .budgeting import Budgeting
from .records import Records

if TYPE_CHECKING:
    import pandas as pd


class Reading(Budgeting, Records):
    """Entries read back, exported, reconciled and forecast."""

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

    def max_image_id(self) -> int | None:
        """The highest image id this account's entries name (those waiting in the spool included)."""
        ids = [i for entry in self._read(self.entries, list) for i in entry.image_ids]  # none while unreachable
        return max([*ids, *(i for waiting in self._waiting() for i in json.loads(waiting["image_ids"]))], default=None)
