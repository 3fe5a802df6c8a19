"""Usage tables from the ledger: spend by operation, day and style; balance over time; plan limits
against usage; and when the credits run out at the current rate."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pandas as pd

__all__ = ["spend_by_operation", "spend_by_day", "spend_by_style", "balance_over_time", "limits",
           "forecast", "Forecast"]


def _charged(ledger: pd.DataFrame) -> pd.DataFrame:
    frame = ledger.copy()
    frame["credits"] = pd.to_numeric(frame["credits"], errors="coerce").fillna(0.0)
    # A refund is spend given back: it belongs to the operation it undoes (creates, here).
    frame["operation"] = frame["operation"].replace({"refund": "create"})
    return frame


def spend_by_operation(ledger: pd.DataFrame) -> pd.DataFrame:
    """Credits, operations and images made, per operation, dearest first."""
    frame = _charged(ledger)
    frame["images"] = frame["image_ids"].map(len)
    table = frame.groupby("operation").agg(credits=("credits", "sum"), calls=("operation", "size"),
                                           images=("images", "sum"))
    return table.sort_values("credits", ascending=False)


def spend_by_day(ledger: pd.DataFrame) -> pd.DataFrame:
    """Credits per UTC day, with the running total."""
    frame = _charged(ledger)
    table = frame.groupby(frame["time"].dt.tz_convert("UTC").dt.date)["credits"].sum().to_frame()
    table.index.name = "day"
    table["cumulative"] = table["credits"].cumsum()
    return table


def spend_by_style(ledger: pd.DataFrame) -> pd.DataFrame:
    """Credits of generations per style (refunds counted against the style that was charged)."""
    frame = _charged(ledger)
    frame = frame[frame["operation"] == "create"].copy()
    styles = frame.dropna(subset=["group_id"]).drop_duplicates("group_id", keep="first").set_index("group_id")["style_id"]
    frame["style_id"] = frame["style_id"].fillna(frame["group_id"].map(styles))
    frame["style"] = frame["style_id"].map(lambda s: "no style" if pd.isna(s) else f"style {int(s)}")
    table = frame.groupby("style").agg(credits=("credits", "sum"), calls=("style", "size"))
    return table.sort_values("credits", ascending=False)


def balance_over_time(ledger: pd.DataFrame, current: float | None = None) -> pd.DataFrame:
    """The balance after each operation: as the service reported it where it did, else worked back
    from ``current`` (the balance now) and the credits charged since."""
    frame = _charged(ledger).sort_values("time")[["time", "operation", "credits", "balance"]].reset_index(drop=True)
    if current is not None:
        after = current + frame["credits"][::-1].cumsum()[::-1].shift(-1, fill_value=0.0)
        frame["balance"] = pd.to_numeric(frame["balance"], errors="coerce").fillna(after)
    return frame


def limits(user: Any, usage: Any) -> pd.DataFrame:
    """Plan limits against usage (from ``me()`` and ``usage()``)."""
    plan = user.plan
    rows = [
        ("credits", usage.current_credit, usage.max_credit),
        ("edits", usage.edit_count, usage.max_edit_count),
        ("text-to-prompt", usage.ttp_count, usage.max_ttp_count),
        ("concurrent generations", None, plan.simultaneous_limit),
        ("styles", None, plan.max_style_number),
    ]
    frame = pd.DataFrame(rows, columns=["limit", "used", "maximum"]).set_index("limit")
    frame["share"] = pd.to_numeric(frame["used"], errors="coerce") / pd.to_numeric(frame["maximum"], errors="coerce")
    return frame


@dataclass(frozen=True)
class Forecast:
    """When the balance runs out at the recent rate of spend."""

    balance: float
    per_day: float
    """Credits spent per day over the window."""
    runs_out: datetime | None
    """None when nothing is being spent."""

    def __str__(self) -> str:
        if self.runs_out is None:
            return f"{self.balance:g} credits left; nothing spent recently"
        return (f"{self.balance:g} credits left at {self.per_day:.1f}/day: "
                f"runs out around {self.runs_out:%Y-%m-%d %H:%M} UTC")


def forecast(ledger: pd.DataFrame, balance: float, *, days: float = 7.0, now: datetime | None = None) -> Forecast:
    """When ``balance`` runs out, spending as over the last ``days`` (or since the first entry,
    if that is more recent, so a fresh account is not judged by a week it did not live)."""
    now = now or datetime.now(timezone.utc)
    frame = _charged(ledger)
    recent = frame[frame["time"] >= pd.Timestamp(now) - pd.Timedelta(days=days)]
    spent = float(recent["credits"].sum())
    if spent <= 0 or recent.empty:
        return Forecast(balance, 0.0, None)
    span = max((pd.Timestamp(now) - recent["time"].min()).total_seconds(), 3600.0) / 86400
    per_day = spent / span
    return Forecast(balance, per_day, now + timedelta(days=max(balance, 0) / per_day))
