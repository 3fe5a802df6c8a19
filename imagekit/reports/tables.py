"""Usage tables from the ledger: spend by operation, day and style; balance over time; plan limits
against usage; and when the credits run out at the current rate."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pandas as pd

from ..ledger.entries import Status
from ..ledger.forecasts import MIN_HISTORY, UNTAGGED, rate, runs_out, spending

if TYPE_CHECKING:
    from ..models import Usage, User

__all__ = ["duration_text", "spend_by_operation", "spend_by_day", "spend_by_style", "spend_by_tag", "balance_over_time",
           "limits", "forecast", "Forecast", "style_label", "MIN_HISTORY", "period_start", "shown_limits"]

def style_label(style_id: int | float | None, names: dict[int, str] | None = None) -> str:
    """How a style is named in every table, chart and sheet: its name where the caller's styles
    show it (``Oil paint #3``), else ``style 3``."""
    if pd.isna(style_id):
        return "no style"
    name = (names or {}).get(int(style_id))
    return f"{name} #{int(style_id)}" if name else f"style {int(style_id)}"


def _charged(ledger: pd.DataFrame) -> pd.DataFrame:
    frame = spending(ledger)  # readings are not spending, nor a call the service refused (nothing was charged)
    frame = frame[frame["status"] != Status.FAILED.value] if "status" in frame else frame
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


def spend_by_style(ledger: pd.DataFrame, names: dict[int, str] | None = None) -> pd.DataFrame:
    """Credits of generations per style (refunds counted against the style that was charged);
    ``names`` (style id -> name, from ``styles()``) names them as ``style_label`` does."""
    frame = _charged(ledger)
    frame = frame[frame["operation"] == "create"].copy()
    styles = frame.dropna(subset=["group_id"]).drop_duplicates("group_id", keep="first").set_index("group_id")["style_id"]
    frame["style_id"] = frame["style_id"].fillna(frame["group_id"].map(styles))
    frame["style"] = frame["style_id"].map(lambda s: style_label(s, names))
    table = frame.groupby("style").agg(credits=("credits", "sum"), calls=("style", "size"))
    return table.sort_values("credits", ascending=False)


def spend_by_tag(ledger: pd.DataFrame, key: str) -> pd.DataFrame:
    """Credits, operations, images made and entries whose credits are still unknown, per value of
    tag ``key`` (refunds and settlements count under the tag of what they undo), dearest first;
    entries without the tag are one line, ``(untagged)``, so the lines add up to the whole spend."""
    frame = _charged(ledger)
    answered = frame["status"] == Status.ANSWERED.value
    frame = frame.assign(images=frame["image_ids"].map(len),
                         unknown=pd.to_numeric(ledger.loc[frame.index, "credits"], errors="coerce").isna() & answered,
                         value=frame["tags"].map(lambda tags: (tags or {}).get(key, UNTAGGED)))
    table = frame.groupby("value").agg(credits=("credits", "sum"), calls=("value", "size"),
                                       images=("images", "sum"), unknown=("unknown", "sum"))
    table.index.name = key
    return table.sort_values("credits", ascending=False)


def balance_over_time(ledger: pd.DataFrame, current: float | None = None) -> pd.DataFrame:
    """The balance after each operation: as the service reported it where it did, else worked back
    from ``current`` (the balance now) and the credits charged since."""
    frame = _charged(ledger).sort_values("time")[["time", "operation", "credits", "balance"]].reset_index(drop=True)
    if current is not None:
        after = current + frame["credits"][::-1].cumsum()[::-1].shift(-1, fill_value=0.0)
        frame["balance"] = pd.to_numeric(frame["balance"], errors="coerce").fillna(after)
    return frame


def period_start(user: User, usage: Usage, now: datetime | None = None) -> datetime:
    """When the plan's current period began: today (UTC) for a daily plan; for a monthly one, a
    month before the next plan charge (``nextPlanAt``), else the first of the month."""
    now = now or datetime.now(UTC)
    period = usage.period or (user.plan.period if user.plan else None)
    if period == "day":
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
    if user.next_plan_at is not None:
        return (pd.Timestamp(user.next_plan_at) - pd.DateOffset(months=1)).to_pydatetime()
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def limits(user: User, usage: Usage, ledger: pd.DataFrame | None = None, now: datetime | None = None) -> pd.DataFrame:
    """Where the account stands against its plan (from ``me()``, ``usage()`` and the ledger): the
    credit balance against its cap, credits spent this period, edits and text-to-prompt used this
    period against their caps, and the plan's fixed limits. ``share`` is value / cap."""
    plan = user.plan
    period = usage.period or (plan.period if plan else None) or "period"
    spent = None
    if ledger is not None:
        frame = _charged(ledger)
        spent = float(frame.loc[frame["time"] >= pd.Timestamp(period_start(user, usage, now)), "credits"].sum())
    rows = [
        ("credit balance", usage.current_credit, usage.max_credit),
        (f"credits spent this {period}", spent, None),
        (f"edits this {period}", usage.edit_count, usage.max_edit_count),
        (f"text-to-prompt this {period}", usage.ttp_count, usage.max_ttp_count),
        ("concurrent generations", None, plan.simultaneous_limit if plan else None),
        ("own styles", None, plan.max_style_number if plan else None),
    ]
    frame = pd.DataFrame(rows, columns=["limit", "value", "cap"]).set_index("limit")
    frame["share"] = pd.to_numeric(frame["value"], errors="coerce") / pd.to_numeric(frame["cap"], errors="coerce")
    return frame


def shown_limits(table: pd.DataFrame) -> pd.DataFrame:
    """``limits`` as a person reads it: numbers as written (``2,000``), ``share`` as a percentage,
    and blanks where there is nothing to show."""
    def amount(value: float) -> str:
        return "" if pd.isna(value) else f"{value:,.10g}"

    def percent(value: float) -> str:
        return "" if pd.isna(value) else f"{value * 100:.3g}%"

    value, cap = (pd.to_numeric(table[name], errors="coerce") for name in ("value", "cap"))
    return pd.DataFrame({"value": value.map(amount), "cap": cap.map(amount),
                         "share": table["share"].map(percent)}, index=table.index)


@dataclass(frozen=True)
class Forecast:
    """When the balance runs out at the recent rate of spend."""

    balance: float
    per_day: float
    """Credits spent per day over the window (0 when there is too little history to tell)."""
    runs_out: datetime | None
    """None when nothing is being spent, or the history is too short to tell."""
    history: timedelta = timedelta(0)
    """How long the spending the forecast follows has gone on."""

    @property
    def enough_history(self) -> bool:
        """The spending history is at least ``MIN_HISTORY`` long."""
        return self.history >= MIN_HISTORY

    def __str__(self) -> str:
        if self.per_day == 0 and self.history == timedelta(0):
            return f"{self.balance:g} credits left; nothing spent recently"
        if not self.enough_history:
            return (f"{self.balance:g} credits left; too little history for a forecast "
                    f"({duration_text(self.history)} of spending; it needs {duration_text(MIN_HISTORY)})")
        if self.runs_out is None:
            return f"{self.balance:g} credits left; nothing spent recently"
        return (f"{self.balance:g} credits left at {self.per_day:.1f}/day: "
                f"runs out around {self.runs_out:%Y-%m-%d %H:%M} UTC")


def duration_text(span: timedelta) -> str:
    """``span`` in its largest whole unit, to three figures: ``1 day``, ``2.5 hours``, ``40 seconds``."""
    seconds = span.total_seconds()
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds / size
            return f"{count:.3g} {unit}{'s' if count != 1 else ''}"
    return f"{seconds:.0f} seconds"


def forecast(ledger: pd.DataFrame, balance: float, *, days: float = 7.0, now: datetime | None = None) -> Forecast:
    """When ``balance`` runs out, spending as over the last ``days`` (or since the first entry,
    if that is more recent, so a fresh account is not judged by a week it did not live): a week or
    more of it replayed hour by hour, less spread evenly (see ``imagekit.ledger.forecasts``). Less
    than ``MIN_HISTORY`` of spending gives no date: it says there is too little history."""
    pace = rate(spending(ledger), now or datetime.now(UTC), days=days)
    if not pace.enough_history or pace.per_day <= 0:
        return Forecast(balance, 0.0, None, pace.history)
    return Forecast(balance, pace.per_day, runs_out(pace, max(balance, 0)), pace.history)
