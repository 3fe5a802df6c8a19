"""Spend per tag value over a period (a day, week or month in a time zone): the top values, the
rest folded into one row, each against the same stretch of the period before and with the date its
budget runs out (what ``imagekit usage --by TAG --period week`` prints)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pandas as pd

from ..ledger.forecasts import ACCOUNT, UNTAGGED, forecast, spending
from ..ledger.periods import checked_zone, period_bounds

if TYPE_CHECKING:
    from ..ledger.budgets import Budget

__all__ = ["spend_by_period", "shown_period", "TOP"]

TOP = 10
"""How many tag values a period's table names; the rest are one ``other`` row."""
TOTAL = "total"


def spend_by_period(ledger: pd.DataFrame, key: str, budgets: Sequence[Budget] = (), *, period: str = "week",
                    tz: str = "UTC", top: int = TOP, days: float = 7.0, now: datetime | None = None) -> pd.DataFrame:
    """Per value of tag ``key`` (the ``top`` dearest this period, and any whose budget is spent; the
    rest summed in one row named ``other (N values)``, and a ``total`` row): credits ``spent`` this period, ``before`` (in the
    same stretch of the period before), ``change`` (a share of ``before``; NaN when it was 0),
    ``per_day`` (the recent rate; NaN with under ``MIN_HISTORY`` of spending) and when its budget
    ``runs_out`` (the soonest of those folded), counting each budget's reset (see
    ``imagekit.ledger.forecasts``)."""
    now = now or datetime.now(UTC)
    outlook = forecast(ledger, budgets, by=key, period=period, tz=tz, days=days, now=now)
    start, _ = period_bounds(now, period, tz)
    previous, _ = period_bounds(start - timedelta(microseconds=1), period, tz)
    spent = spending(ledger)
    values = spent["tags"].map(lambda tags: (tags or {}).get(key, UNTAGGED))
    earlier = (spent["time"] >= pd.Timestamp(previous)) & (spent["time"] < pd.Timestamp(previous + (now - start)))
    this = (spent["time"] >= pd.Timestamp(start)) & (spent["time"] <= pd.Timestamp(now))
    table = outlook.drop(index=ACCOUNT)[["per_day", "runs_out"]].copy()
    # This period's spending, whatever period a tag's budget counts over (an all-time one, a month).
    table.insert(0, "spent", spent[this].groupby(values[this])["credits"].sum().reindex(table.index).fillna(0.0))
    table.insert(1, "before", spent[earlier].groupby(values[earlier])["credits"].sum().reindex(table.index).fillna(0.0))
    table = table.sort_values(["spent", "before"], ascending=False, kind="stable")
    table = table[(table["spent"] != 0) | (table["before"] != 0) | table["runs_out"].notna()]
    spent_out = table["runs_out"] <= pd.Timestamp(now)  # a spent budget is named, never folded away
    named = table.iloc[:top].index.union(table.index[spent_out], sort=False)
    table = pd.concat([table.loc[table.index.isin(named)], table.loc[~table.index.isin(named)]])
    top = len(named)
    rest = table.iloc[top:]
    if len(rest):
        folded = {"spent": rest["spent"].sum(), "before": rest["before"].sum(), "per_day": rest["per_day"].sum(min_count=1),
                  "runs_out": rest["runs_out"].min()}
        table = pd.concat([table.iloc[:top], pd.DataFrame([folded], index=[f"other ({len(rest)} value{'' if len(rest) == 1 else 's'})"])])
    whole = outlook.loc[ACCOUNT]
    total = {"spent": float(spent.loc[this, "credits"].sum()), "before": float(spent.loc[earlier, "credits"].sum()), "per_day": whole["per_day"],
             "runs_out": pd.NaT}
    table = pd.concat([table, pd.DataFrame([total], index=[TOTAL])])
    table.insert(2, "change", (table["spent"] - table["before"]) / table["before"].where(table["before"] != 0))
    table.index.name = key
    table["runs_out"] = pd.to_datetime(table["runs_out"], utc=True).dt.tz_convert(checked_zone(tz))
    table.attrs["now"] = pd.Timestamp(now)
    return table


def shown_period(table: pd.DataFrame, period: str) -> pd.DataFrame:
    """``spend_by_period`` as a person reads it: credits as written (``1,250``), the change as a
    percentage (``new`` where nothing was spent before), a rate too new to tell blank, dates as
    ``Fri 04 Dec 14:00`` (``already`` for a budget spent by the time of the table), blanks where there
    is nothing to show."""
    def amount(value: float) -> str:
        return "" if pd.isna(value) else f"{value:,.6g}"

    def rate(value: float) -> str:
        return "" if pd.isna(value) else f"{value:,.1f}"

    def change(row: pd.Series) -> str:
        if pd.notna(row["change"]):
            return f"{row['change'] * 100:+.0f}%"
        return "new" if row["spent"] else ""

    def date(value: pd.Timestamp) -> str:
        if pd.isna(value):
            return ""
        return "already" if "now" in table.attrs and value <= table.attrs["now"] else f"{value:%a %d %b %H:%M}"

    return pd.DataFrame({"spent": table["spent"].map(amount), f"{period} before": table["before"].map(amount),
                         "change": table.apply(change, axis=1), "per day": table["per_day"].map(rate),
                         "runs out": table["runs_out"].map(date)}, index=table.index)
