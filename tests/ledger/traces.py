"""Synthetic spend traces (steady, bursty, weekly cycles) and the forecast's error on them: the test
of the 10 % bound and ``benchmarks/bench_forecast.py`` share them.

Each trace is a ledger frame (``time``, ``operation``, ``credits``, ``tags``, ``account``) with 7 days
of history before ``now`` (its first entry + 7 days) and ``FUTURE`` after it. The true run-out is
read off the future entries one by one (its period boundaries from pandas' calendar, not from the
code under test); the error is the distance between forecast and truth over the time the truth
lies ahead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import pandas as pd

from imagekit.ledger.budgets import Budget
from imagekit.ledger.forecasts import ACCOUNT, forecast

TZ = "Europe/Berlin"
"""The team's time zone: its days, weeks and months, and a daylight-saving change in March."""
START = pd.Timestamp("2026-03-02 00:00", tz=TZ)
"""Traces start in the first week of this month (on any day of it), so their month holds the
clock change."""
HISTORY = pd.Timedelta(days=7)
FUTURE = pd.Timedelta(days=70)
TAG = {"experiment": "grid"}


def _frame(times: np.ndarray, credits: np.ndarray) -> pd.DataFrame:
    order = np.argsort(times)
    return pd.DataFrame({"time": pd.to_datetime(times[order], unit="s", utc=True).round("us"), "operation": "create",
                         "credits": credits[order].astype(float), "tags": [TAG] * len(times), "account": "team"})


def steady(rng: np.random.Generator, start: pd.Timestamp) -> pd.DataFrame:
    """About 40 operations an hour, day and night, of 1 to 4 credits (Poisson arrivals)."""
    span = (HISTORY + FUTURE).total_seconds()
    count = rng.poisson(40 * span / 3600)
    return _frame(start.timestamp() + rng.uniform(0, span, count), rng.integers(1, 5, count))


def bursty(rng: np.random.Generator, start: pd.Timestamp) -> pd.DataFrame:
    """Sweeps: 6 a day at random times, each 40 to 60 operations of 2 credits within 10 minutes;
    nothing in between."""
    days = (HISTORY + FUTURE).days
    starts = start.timestamp() + (np.arange(days)[:, None] * 86400 + rng.uniform(0, 86400, (days, 6))).ravel()
    sizes = rng.integers(40, 61, len(starts))
    times = np.repeat(starts, sizes) + rng.uniform(0, 600, int(sizes.sum()))
    return _frame(times, np.full(len(times), 2))


def weekly(rng: np.random.Generator, start: pd.Timestamp) -> pd.DataFrame:
    """A team's week in its own time zone: 400 operations an hour in working hours (9 to 18, Monday
    to Friday), 20 an hour otherwise on weekdays, 30 at weekends; 1 to 4 credits each."""
    hours = pd.date_range(start, start + HISTORY + FUTURE, freq="h", inclusive="left")
    local = hours.tz_convert(TZ)
    working = (local.day_of_week < 5) & (local.hour >= 9) & (local.hour < 18)
    intensity = np.where(working, 400, np.where(local.day_of_week < 5, 20, 30))
    counts = rng.poisson(intensity)
    base = np.repeat(hours.asi8 // 10**9, counts).astype(float)
    times = base + rng.uniform(0, 3600, len(base))
    return _frame(times, rng.integers(1, 5, len(times)))


TRACES: dict[str, Callable[[np.random.Generator, pd.Timestamp], pd.DataFrame]] = {
    "steady": steady, "bursty": bursty, "weekly cycles": weekly}


@dataclass(frozen=True)
class Scenario:
    """What runs out: the account's credits (``balance``) or the tag's budget (``limit`` a ``period``)."""

    name: str
    days_left: float
    """How many days of the trace's mean spending are left (the balance, or the budget past what
    this period spent so far)."""
    period: str | None = None
    scale_to_period: bool = False
    """The limit is ``days_left`` times a whole period's mean spending (so it may outlast the period)."""


SCENARIOS = [
    Scenario("credits, 12 days left", 12),
    Scenario("credits, 30 days left", 30),
    Scenario("monthly budget, 14 days left", 14, "month"),
    Scenario("monthly budget, 1.15 months' spend", 1.15, "month", scale_to_period=True),
    Scenario("weekly budget, 1.25 weeks' spend", 1.25, "week", scale_to_period=True),
]
"""The budgets above a period's spending reset before they run out: they do not run out (a week of
bursty spending varies by about 5 %, a month by less)."""


def true_run_out(future: pd.DataFrame, left: float, limit: float | None, period: str | None) -> pd.Timestamp | None:
    """The first future entry at which ``left`` (then ``limit``, each new period) is spent."""
    times, credits = future["time"], future["credits"]
    if period is None:
        number = pd.Series(0, index=future.index)
    else:
        boundaries = [_next_boundary(times.iloc[0], period)]
        while boundaries[-1] <= times.iloc[-1]:
            boundaries.append(_next_boundary(boundaries[-1], period))
        number = pd.Series(np.searchsorted(pd.DatetimeIndex(boundaries).as_unit("ns").asi8,
                                                           pd.DatetimeIndex(times).as_unit("ns").asi8, side="right"), index=future.index)
    need = np.where(number == 0, left, limit if limit is not None else np.inf)
    out = (credits.groupby(number).cumsum() >= need).to_numpy()
    return times.iloc[int(out.argmax())] if out.any() else None


def _next_boundary(time: pd.Timestamp, period: str | None) -> pd.Timestamp:
    local = time.tz_convert(TZ).normalize()
    if period == "week":
        return local - pd.Timedelta(days=local.weekday()) + pd.DateOffset(weeks=1)
    if period == "month":
        return local.replace(day=1) + pd.DateOffset(months=1)
    return local + pd.DateOffset(days=1)


def _start_of(time: pd.Timestamp, period: str) -> pd.Timestamp:
    local = time.tz_convert(TZ).normalize()
    return local - pd.Timedelta(days=local.weekday()) if period == "week" else local.replace(day=1)


@dataclass(frozen=True)
class Outcome:
    trace: str
    scenario: str
    truth: pd.Timestamp | None
    forecast: pd.Timestamp | None
    now: datetime

    @property
    def error(self) -> float:
        """How far the forecast is from the truth, as a share of the time until the truth (0 when
        both say it does not run out; infinite when only one does)."""
        if self.truth is None or self.forecast is None:
            return 0.0 if self.truth is self.forecast is None else math.inf
        return abs((self.forecast - self.truth) / (self.truth - pd.Timestamp(self.now)))


def outcomes(trace: str, seed: int, estimate: Callable[..., pd.Timestamp | None] | None = None) -> list[Outcome]:
    """The forecast against the truth in each of ``SCENARIOS`` on one trace (drawn from ``seed``):
    ``estimate(history, now, left, limit, period)`` stands in for ``forecast`` (the benchmark's naive rate)."""
    rng = np.random.default_rng(seed)
    frame = TRACES[trace](rng, START + pd.Timedelta(hours=float(rng.uniform(0, 168))))
    now = (frame["time"].iloc[0] + HISTORY).to_pydatetime()
    history, future = frame[frame["time"] <= now], frame[frame["time"] > now]
    mean_day = float(frame["credits"].sum()) / ((HISTORY + FUTURE) / pd.Timedelta(days=1))
    found = []
    for scenario in SCENARIOS:
        period = scenario.period
        if period is None:
            left, limit = scenario.days_left * mean_day, None
        else:
            start, end = _start_of(pd.Timestamp(now), period), _next_boundary(pd.Timestamp(now), period)
            spent = float(history.loc[history["time"] >= start, "credits"].sum())
            limit = scenario.days_left * mean_day * ((end - start) / pd.Timedelta(days=1) if scenario.scale_to_period
                                                     else 1) + (0 if scenario.scale_to_period else spent)
            left = limit - spent
        truth = true_run_out(future, left, limit, period)
        guess = estimate(history, now, left, limit, period) if estimate else _forecast(history, now, left, limit, period)
        found.append(Outcome(trace, scenario.name, truth, guess, now))
    return found


def _forecast(history: pd.DataFrame, now: datetime, left: float, limit: float | None, period: str | None) -> pd.Timestamp | None:
    budgets = [] if limit is None else [_PeriodBudget("experiment", "grid", limit, period=period, tz=TZ)]
    table = forecast(history, budgets, by="experiment", account="team", balance=left if limit is None else None,
                     period=period, tz=TZ, now=now)
    found = table.loc[ACCOUNT if limit is None else "grid", "runs_out"]
    return None if pd.isna(found) else pd.Timestamp(found)


@dataclass(frozen=True)
class _PeriodBudget(Budget):
    """A budget that names its period and time zone, as budgets with alerts do."""

    period: str | None = None
    tz: str = "UTC"


def naive(history: pd.DataFrame, now: datetime, left: float, limit: float | None, period: str | None) -> pd.Timestamp | None:
    """The forecast before this one: the last 7 days' mean rate, no weekly shape, no reset."""
    per_day = float(history.loc[history["time"] > pd.Timestamp(now) - HISTORY, "credits"].sum()) / 7
    return pd.Timestamp(now) + timedelta(days=left / per_day) if per_day > 0 else None

