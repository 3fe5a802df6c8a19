"""Forecasts: when a tag's budget and the account's credits run out at the recent rate of spend,
counting the budget's reset at the end of its period (day, week or month, in a time zone).

The rate follows the last ``days`` of spending (7 by default), or the spending's whole life if it
is younger (a fresh account is not judged by a week it did not live). With at least a week of it,
the forecast replays the last whole weeks hour by hour (their mean for each hour of the week,
smoothed over 3 hours), so a team that spends on weekdays is not expected to spend on Sunday; with
less (a day at least), it spends at the mean rate of what there is. A budget runs out when its
period's spending, so far and projected, reaches its limit; one that resets first starts again
from nothing in the next period, so it runs out there only if a whole period's spending passes
the limit.

Pure functions of a ledger's frame (``Ledger.to_pandas``) and its budgets: the book reads them and
reports print what they decide. Needs pandas and numpy, imported when called.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..extras import needs_extra
from .entries import BALANCE, Entry, Status
from .periods import checked_period, checked_zone, period_bounds

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .budgets import Budget

__all__ = ["MIN_HISTORY", "ACCOUNT", "UNTAGGED", "spending", "Rate", "rate", "runs_out", "balance_now", "forecast",
           "checked_days", "refuse_unknown_tag"]

MIN_HISTORY = timedelta(days=1)
"""The spending history a forecast needs: less says too little about a rate per day."""
WEEK_HOURS = 7 * 24
HORIZON = timedelta(days=3660)
"""How far a forecast looks: a run-out further off is none (ten years, as ``imagekit usage --days``)."""
ACCOUNT = "(account)"
"""The row of the account as a whole in ``forecast``'s table."""
UNTAGGED = "(untagged)"
"""How the entries that do not carry the tag are named."""
RESETS_SEEN = timedelta(days=400)
"""How far a budget that resets is followed: its periods repeat within a year, so one that no
period of the next year exhausts is not exhausted."""
SMOOTH_HOURS = 3
"""A week replayed is smoothed over this many hours: last week's bursts came at chance times."""
_HOUR = timedelta(hours=1)


def spending(frame: pd.DataFrame) -> pd.DataFrame:
    """The entries that spend or give back credits (balance readings left out, and a request whose
    answer was lost once a probe recovered it: the recovered entry is that request), credits as
    numbers (0 while unknown)."""
    with needs_extra():  # a missing extra: one line naming it
        import pandas as pd

    spent = frame[frame["operation"] != BALANCE]
    if {"status", "group_id"} <= set(spent.columns):  # a lost answer a probe settled is one request, told once
        found = spent.loc[spent["status"] == Status.RECOVERED.value, "group_id"].dropna()
        spent = spent[~((spent["status"] == Status.NO_RESPONSE.value) & spent["group_id"].isin(found))]
    spent = spent.copy()
    spent["credits"] = pd.to_numeric(spent["credits"], errors="coerce").fillna(0.0)
    return spent


class Rate:
    """Spending per hour of the coming week, from the recent past (see ``rate``)."""

    def __init__(self, hourly: np.ndarray, history: timedelta, now: datetime, *, even: bool = False) -> None:
        with needs_extra():  # a missing extra: one line naming it
            import numpy as np

        self.hourly = hourly
        """Credits in each of the next 168 hours from ``now``; the week repeats after them."""
        self.even = even
        """Every hour spends the same (less than a week of history)."""
        self.history = history
        """How long the spending the rate follows has gone on (0: nothing spent)."""
        self.now = now
        self._cumulative = np.concatenate([[0.0], np.cumsum(hourly)])
        self._weekly = float(self._cumulative[-1])

    @property
    def per_day(self) -> float:
        """Credits a day, over the week (0 with too little history to tell)."""
        return self._weekly / 7 if self.enough_history else 0.0

    @property
    def enough_history(self) -> bool:
        """The spending history is at least ``MIN_HISTORY`` long."""
        return self.history >= MIN_HISTORY

    def spent_by(self, hours: float) -> float:
        """Credits spent from ``now`` until ``hours`` later, at this rate."""
        weeks, rest = divmod(max(hours, 0.0), WEEK_HOURS)
        whole = int(rest)
        return weeks * self._weekly + float(self._cumulative[whole]) + (rest - whole) * float(self.hourly[whole % WEEK_HOURS])

    def reaches(self, credits: float, start: float = 0.0, end: float = math.inf) -> float | None:
        """The hour (from ``now``) at which spending from hour ``start`` on reaches ``credits``, if
        it does by hour ``end`` and within ``HORIZON``."""
        with needs_extra():  # a missing extra: one line naming it
            import numpy as np

        if credits <= 0:
            return start
        if not self.enough_history or self._weekly <= 0:
            return None
        target = self.spent_by(start) + credits
        weeks = math.floor(target / self._weekly)
        rest = target - weeks * self._weekly
        if rest > self._weekly:  # the division rounded down
            weeks, rest = weeks + 1, rest - self._weekly
        if rest <= 0:  # reached as a week ends: at that week's last spending hour
            weeks, rest = weeks - 1, self._weekly
        # the first hour whose total reaches ``rest``, within rounding: a sum that rounds just below
        # ``rest`` on a plateau of idle hours would otherwise be looked for past them
        reached = rest - 1e-9 * self._weekly
        hour = min(max(int(np.searchsorted(self._cumulative, reached, side="left")), 1), WEEK_HOURS)
        rising = float(self.hourly[hour - 1])
        share = min((rest - self._cumulative[hour - 1]) / rising, 1.0) if rising > 0 else 0.0
        found = weeks * WEEK_HOURS + hour - 1 + share
        return found if found <= min(end, HORIZON / _HOUR) else None


def rate(frame: pd.DataFrame, now: datetime, *, days: float = 7.0) -> Rate:
    """The rate of spending of ``frame``'s entries (``spending``) up to ``now``: over the last
    ``days`` (or since the first entry, if more recent); a week or more of it is replayed hour by
    hour (the mean of its whole weeks, the most recent ones), less is spread evenly."""
    with needs_extra():  # a missing extra: one line naming it
        import numpy as np
        import pandas as pd

    stamp = pd.Timestamp(now)
    past = frame[(frame["time"] <= stamp) & frame["time"].notna()]
    if past.empty or not (past["credits"] != 0).any():
        return Rate(np.zeros(WEEK_HOURS), timedelta(0), now)
    span = min(stamp - past["time"].min(), pd.Timedelta(days=days))
    history = span.to_pytimedelta()
    weeks = math.floor(span / pd.Timedelta(days=7))
    if weeks:
        window = weeks * pd.Timedelta(days=7)
        recent = past[past["time"] >= stamp - window]
        hours = ((recent["time"] - (stamp - window)) / pd.Timedelta(hours=1)).to_numpy()
        # an entry at ``now`` belongs to the last hour, not to a week that has not begun
        buckets = np.clip(np.ceil(hours).astype(int) - 1, 0, weeks * WEEK_HOURS - 1) % WEEK_HOURS
        hourly = np.bincount(buckets, weights=recent["credits"].to_numpy(float), minlength=WEEK_HOURS) / weeks
    else:
        total = float(past.loc[past["time"] >= stamp - span, "credits"].sum())
        hourly = np.full(WEEK_HOURS, total / max(span / pd.Timedelta(hours=1), 1e-9))
    if weeks and SMOOTH_HOURS > 1:
        kernel = np.ones(SMOOTH_HOURS) / SMOOTH_HOURS
        reach = SMOOTH_HOURS // 2
        hourly = np.convolve(np.concatenate([hourly[-reach:], hourly, hourly[:reach]]), kernel, mode="valid")
    net = float(hourly.sum())  # refunds may leave an hour below nothing: spread the net over the others
    hourly = np.clip(hourly, 0, None)
    if net > 0 and hourly.sum() > 0:
        hourly *= net / hourly.sum()
    else:
        hourly[:] = 0.0
    return Rate(hourly, history, now, even=not weeks)


def runs_out(rate: Rate, left: float, *, limit: float | None = None, period: str | None = None,
             tz: str = "UTC") -> datetime | None:
    """When ``left`` credits are spent at ``rate``; with a ``period``, those of a budget of ``limit``
    a period that resets at each period's end, so it runs out in a later period only if a whole
    period's spending reaches the limit (looked for over ``RESETS_SEEN``). None: it does not run out
    (within ``HORIZON``)."""
    now = rate.now
    if left <= 0:
        return now
    if rate.per_day <= 0:
        return None
    if period is None or limit is None:
        if rate.even and rate.per_day > 0:
            return now + timedelta(days=left / rate.per_day)
        hours = rate.reaches(left)
        return None if hours is None else now + hours * _HOUR
    start, end, need = 0.0, (period_bounds(now, period, tz)[1] - now) / _HOUR, left
    while start * _HOUR < RESETS_SEEN:
        if (hours := rate.reaches(need, start, end)) is not None:
            return now + hours * _HOUR
        start, need = end, limit
        end = (period_bounds(now + start * _HOUR, period, tz)[1] - now) / _HOUR
    return None


def balance_now(entries: Iterable[Entry]) -> float | None:
    """The balance after the last entry: the last one the service reported, less the credits
    charged since (None before any reading)."""
    balance: float | None = None
    for entry in entries:
        if entry.balance is not None:
            balance = float(entry.balance)
        elif balance is not None and entry.operation != BALANCE and entry.credits is not None:
            balance -= float(entry.credits)
    return balance


def forecast(frame: pd.DataFrame, budgets: Sequence[Budget] = (), *, by: str | None = None, account: str = "",
             balance: float | None = None, period: str | None = "month", tz: str = "UTC", days: float = 7.0,
             now: datetime | None = None) -> pd.DataFrame:
    """Per value of tag ``by`` (over every account in ``frame``, as budgets count) and for
    ``account`` (""): every account): credits spent this period, the recent rate a day (NaN with
    less than ``MIN_HISTORY`` of spending, too little to tell), the budget's limit and what is left
    of it this period, when the period resets, when it runs out (NaT: not within ``HORIZON``, or
    nothing to run out, or too little history to tell), in time zone ``tz``, and how long the
    spending the rate follows has gone on. A budget's row counts in the budget's own period and time
    zone, as it is enforced (one without a period never resets); ``period`` and ``tz`` are for the
    other rows. The account's row is bound by its ``balance`` and by the budgets among ``budgets``
    without a tag that bind it (its own, the whole ledger's): what is left is the least of them, and
    it runs out at the first to."""
    with needs_extra():  # a missing extra: one line naming it
        import pandas as pd

    checked_period(period)
    checked_zone(tz)
    days = checked_days(days)
    now = now or datetime.now(UTC)
    spent = spending(frame)
    rows: list[dict[str, Any]] = []
    if by is not None:
        values = spent["tags"].map(lambda tags: (tags or {}).get(by, UNTAGGED))
        limits = {budget.value: budget for budget in budgets if budget.key == by}
        for value in sorted(set(values) | set(limits)):
            budget = limits.get(value)
            rows.append(_row(value, spent[values == value], budget, now, period, tz, days))
    mine = spent if not account else spent[spent["account"] == account]
    rows.append(_account_row(spent, mine, [budget for budget in budgets if not budget.key and budget.value in
                                           {account, ""}], now, period, tz, days, balance))
    table = pd.DataFrame(rows).set_index("name")
    table.index.name = by or "name"
    for column in ("resets", "runs_out"):
        table[column] = pd.to_datetime(table[column], utc=True).dt.tz_convert(checked_zone(tz))
    order = table.drop(index=ACCOUNT).sort_values("spent", ascending=False, kind="stable").index
    return table.loc[[*order, ACCOUNT]]


def refuse_unknown_tag(frame: pd.DataFrame, key: str, budgets: Sequence[Budget], where: str) -> None:
    """ConfigError, naming the tags there are, when ``frame`` has entries but none carries tag ``key``
    and no budget is set on it: a mistyped tag is told, not shown as all spend untagged."""
    if not len(frame) or any(budget.key == key for budget in budgets):
        return
    known = sorted({name for tags in frame["tags"] for name in (tags or {})})
    if key not in known:
        raise ConfigError(f"no entry in the ledger at {where} carries the tag {key!r}; "
                          + (f"its tags: {', '.join(known)}" if known else "none carries a tag yet"))


def checked_days(days: object) -> float:
    """``days`` of spending a rate follows, if a number from 1 (``MIN_HISTORY``) to ``HORIZON``'s;
    else a one-line ConfigError."""
    if isinstance(days, bool) or not isinstance(days, int | float) or not 1 <= days <= HORIZON.days:
        raise ConfigError(f"days is how many days of spending the rate follows, a number from 1 (a rate needs a "
                          f"day of spending) to {HORIZON.days} (not {days!r})")
    return float(days)


def _account_row(spent: pd.DataFrame, mine: pd.DataFrame, budgets: Sequence[Budget], now: datetime,
                 period: str | None, tz: str, days: float, balance: float | None) -> dict[str, Any]:
    """The account's row: its credits (``balance``), and the tightest of the budgets that bind it
    (the whole ledger's counts every account's spending)."""
    with needs_extra():  # a missing extra: one line naming it
        import pandas as pd

    credits = _row(ACCOUNT, mine, None, now, period, tz, days, balance)
    bound = [_row(ACCOUNT, mine if budget.value else spent, budget, now, period, tz, days) for budget in budgets]
    if not bound:
        return credits
    tightest = min(bound, key=lambda row: row["left"])
    dates = [row["runs_out"] for row in (credits, *bound) if not pd.isna(row["runs_out"])]
    left = tightest["left"] if balance is None else min(tightest["left"], balance)
    return {**tightest, "left": left, "runs_out": min(dates, default=pd.NaT)}


def _row(name: str, spent: pd.DataFrame, budget: Budget | None, now: datetime, period: str | None, tz: str,
         days: float, balance: float | None = None) -> dict[str, Any]:
    with needs_extra():  # a missing extra: one line naming it
        import pandas as pd

    if budget is not None:  # a budget's own period (a plan month too) and time zone win
        period, tz = budget.period, budget.tz or tz
    start, end = period_bounds(now, period, tz) if period else (None, None)
    so_far = spent if start is None else spent[spent["time"] >= pd.Timestamp(start)]
    this_period = float(so_far.loc[so_far["time"] <= pd.Timestamp(now), "credits"].sum())
    pace = rate(spent, now, days=days)
    if budget is not None:
        limit, left = budget.limit, budget.limit - this_period - budget.held
        date = runs_out(pace, left, limit=limit, period=period, tz=tz)
    else:
        limit, left = math.nan, math.nan if balance is None else balance
        date = None if balance is None else runs_out(pace, balance)
    return {"name": name, "spent": this_period, "per_day": pace.per_day if pace.enough_history else math.nan,
            "limit": limit, "left": left, "period": period or "", "resets": pd.Timestamp(end) if end else pd.NaT,
            "runs_out": pd.Timestamp(date) if date is not None else pd.NaT, "history": pd.Timedelta(pace.history)}
