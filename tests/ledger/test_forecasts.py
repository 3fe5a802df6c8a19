"""Forecasts that know the period: period turns in a time zone (a daylight-saving change too), a
budget that resets before it runs out, the 10 % bound on synthetic traces, and
``ledger.forecast(by=...)`` on a real ledger (SQLite and PostgreSQL) fed by both sandbox faces."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest

from imagekit.errors import ConfigError
from imagekit.ledger import Budget, Entry, Ledger, Status
from imagekit.ledger.forecasts import ACCOUNT, Rate, forecast, rate, runs_out, spending
from imagekit.ledger.periods import period_bounds
from tests.ledger.traces import SCENARIOS, TRACES, outcomes
from tests.utils.service import public_style

BERLIN = "Europe/Berlin"


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@pytest.mark.parametrize(("at", "period", "start", "end"), [
    ("2026-03-10T23:30+00:00", "day", "2026-03-11T00:00+01:00", "2026-03-12T00:00+01:00"),  # past midnight in Berlin
    ("2026-03-29T12:00+02:00", "day", "2026-03-29T00:00+01:00", "2026-03-30T00:00+02:00"),  # a day of 23 hours
    ("2026-10-25T12:00+01:00", "day", "2026-10-25T00:00+02:00", "2026-10-26T00:00+01:00"),  # and one of 25
    ("2026-03-29T23:59+02:00", "week", "2026-03-23T00:00+01:00", "2026-03-30T00:00+02:00"),  # Sunday night
    ("2026-03-30T00:00+02:00", "week", "2026-03-30T00:00+02:00", "2026-04-06T00:00+02:00"),  # Monday at 0:00
    ("2026-12-31T23:30+00:00", "month", "2027-01-01T00:00+01:00", "2027-02-01T00:00+01:00"),  # new year in Berlin
    ("2026-03-15T08:00+01:00", "month", "2026-03-01T00:00+01:00", "2026-04-01T00:00+02:00"),
])
def test_periods_turn_at_midnight_as_the_clock_in_the_time_zone_shows_it(at, period, start, end):
    assert period_bounds(utc(at), period, BERLIN) == (utc(start), utc(end))


def test_a_period_in_utc_is_the_calendar_s():
    assert period_bounds(utc("2026-11-27T14:00+00:00"), "week") == (utc("2026-11-23T00:00+00:00"),
                                                                     utc("2026-11-30T00:00+00:00"))


@pytest.mark.parametrize(("options", "says"), [({"period": "fortnight"}, "one of day, week, month"),
                                               ({"tz": "Mars/Olympus"}, "not a time zone"),
                                               ({"tz": "../etc/passwd"}, "not a time zone"),
                                               ({"days": -1}, r"a number from 1 \(a rate needs a day of spending\) to 3660 \(not -1\)"),
                                               ({"days": float("nan")}, r"\(not nan\)"),
                                               ({"days": "7"}, r"\(not '7'\)")])
def test_a_bad_period_or_time_zone_is_one_line(options, says):
    with pytest.raises(ConfigError, match=says) as caught:
        forecast(pd.DataFrame(columns=["time", "operation", "credits", "tags", "account"]), **options)
    assert "\n" not in str(caught.value)


NOW = utc("2026-03-22T12:00+01:00")  # a Sunday, noon in Berlin
WEDNESDAY = utc("2026-03-18T12:00+01:00")  # noon in Berlin, half a week from either end


def steady_rate(per_day: float) -> Rate:
    return Rate(np.full(168, per_day / 24), timedelta(days=7), NOW)


def test_a_budget_that_resets_before_it_runs_out_does_not_run_out():
    pace = steady_rate(20)  # 140 a week
    assert runs_out(pace, 5, limit=100, period="week", tz=BERLIN) == NOW + timedelta(hours=6)  # this week
    assert runs_out(pace, 100, limit=150, period="week", tz=BERLIN) is None  # every week resets first
    # 12 hours left this week spend 10 of the 100 left: it resets, and next week's 100 go by Friday 0:00
    assert runs_out(pace, 100, limit=100, period="week", tz=BERLIN) == utc("2026-03-28T00:00+01:00")
    # without a reset, the same 100 run out five days on
    assert runs_out(pace, 100) == NOW + timedelta(days=5)


def test_the_reset_follows_the_clock_across_a_daylight_saving_change():
    pace = steady_rate(24)  # a credit an hour
    # a daily budget of 30 starting Sunday 29 March 2026 (23 hours in Berlin): it lasts past the day
    sunday = Rate(pace.hourly, pace.history, utc("2026-03-29T00:00+01:00"))
    assert runs_out(sunday, 30, limit=30, period="day", tz=BERLIN) is None
    assert runs_out(sunday, 20, limit=23, period="day", tz=BERLIN) == utc("2026-03-29T21:00+02:00")
    assert runs_out(sunday, 23, limit=23, period="day", tz=BERLIN) == utc("2026-03-30T00:00+02:00")


def test_a_week_of_history_is_replayed_hour_by_hour():
    """Spending only on weekdays: the weekend is not expected to spend."""
    monday = utc("2026-03-16T00:00+00:00")
    hours = [monday + timedelta(hours=h) for h in range(7 * 24) if (monday + timedelta(hours=h)).weekday() < 5]
    frame = pd.DataFrame({"time": pd.to_datetime(hours, utc=True), "operation": "create", "credits": 1.0,
                          "tags": [{}] * len(hours), "account": "a"})
    pace = rate(spending(frame), monday + timedelta(days=7))
    assert pace.per_day == pytest.approx(120 / 7)
    # 130 credits from Monday 0:00: 120 by Friday night, then nothing until Monday, then 10 hours
    found = runs_out(pace, 130)
    assert found is not None and abs(found - utc("2026-03-30T10:00+00:00")) < timedelta(hours=2)
    flat = rate(spending(frame[frame["time"] >= pd.Timestamp(monday + timedelta(days=3))]), monday + timedelta(days=7))
    assert flat.even and flat.per_day == pytest.approx(48 / 4)  # 4 days of history: spread evenly


def test_a_total_that_rounds_just_below_before_idle_hours_is_reached_there():
    """Six hours spending 1/6 each sum to 0.9999999999999999, then the day is idle: 1 credit is
    reached at hour 6, not looked for past the idle hours (a forecast on a Sunday morning missed a
    Berlin week's end by a week this way)."""
    hourly = np.zeros(168)
    hourly[:6] = hourly[24:30] = 1 / 6
    assert np.cumsum(hourly)[5] < 1  # the rounding this test is about
    pace = Rate(hourly, timedelta(days=7), utc("2026-03-16T00:00+00:00"))
    assert pace.reaches(1.0) == pytest.approx(6.0)
    assert pace.reaches(1.0, 0, 12) == pytest.approx(6.0) and pace.reaches(2.0) == pytest.approx(30.0)


@pytest.mark.parametrize("trace", TRACES)
def test_the_run_out_date_is_within_10_percent_after_7_days_of_data(trace):
    """Ten draws of each trace, every case: credits and budgets, runs out or resets first."""
    found = [outcome for seed in range(10) for outcome in outcomes(trace, seed)]
    assert len(found) == 10 * len(SCENARIOS)
    worst = max(found, key=lambda outcome: outcome.error)
    assert worst.error <= 0.10, worst
    assert any(outcome.truth is None for outcome in found) and any(outcome.truth is not None for outcome in found)


@dataclass(frozen=True)
class DailyBudget(Budget):
    """A budget that names its period, as budgets with alerts do."""

    period: str | None = "day"
    tz: str = BERLIN


def test_a_budget_s_own_period_wins_over_the_forecast_s():
    times = pd.to_datetime([NOW - timedelta(hours=h) for h in range(1, 48)], utc=True)
    frame = pd.DataFrame({"time": times, "operation": "create", "credits": 1.0,
                          "tags": [{"experiment": "a"}] * len(times), "account": "x"})
    own = forecast(frame, [DailyBudget("experiment", "a", 20.0)], by="experiment", now=NOW)
    plain = forecast(frame, [Budget("experiment", "a", 20.0)], by="experiment", now=NOW)
    assert own.loc["a", "period"] == "day" and own.loc["a", "spent"] == 12  # since midnight in Berlin
    assert own.loc["a", "runs_out"] == pd.Timestamp(NOW + timedelta(hours=8))
    assert plain.loc["a", "period"] == "" and plain.loc["a", "left"] == 20 - 47  # a budget of all time
    assert plain.loc["a", "runs_out"] == pd.Timestamp(NOW)  # spent already


def test_the_account_row_is_bound_by_its_budget_and_its_credits_whichever_runs_out_first():
    times = pd.to_datetime([NOW - timedelta(hours=h) for h in range(1, 24 * 10)], utc=True)
    frame = pd.DataFrame({"time": times, "operation": "create", "credits": 1.0,  # 24 a day
                          "tags": [{}] * len(times), "account": "x"})
    spent = 6 * 24 + 12  # an entry an hour since Monday 0:00 in Berlin, Sunday noon now
    weekly = Budget("", "x", spent + 4.0, period="week", tz=BERLIN)
    table = forecast(frame, [weekly], by="experiment", account="x", balance=1000, now=NOW)
    account = table.loc[ACCOUNT]
    assert (account["limit"], account["spent"], account["period"]) == (spent + 4, spent, "week")
    assert account["left"] == 4  # fewer than the 1,000 credits
    assert account["resets"] == pd.Timestamp(period_bounds(NOW, "week", BERLIN)[1])
    assert abs(account["runs_out"] - pd.Timestamp(NOW + timedelta(hours=4))) < pd.Timedelta(hours=1)
    short = forecast(frame, [weekly], account="x", balance=2, now=NOW).loc[ACCOUNT]
    assert short["left"] == 2 and abs(short["runs_out"] - pd.Timestamp(NOW + timedelta(hours=2))) < pd.Timedelta(hours=1)
    lasting = forecast(frame, [Budget("", "x", 200.0, period="week", tz=BERLIN)], account="x", balance=1000,
                       now=NOW).loc[ACCOUNT]  # 168 a week never reaches 200: the credits run out first
    assert lasting["left"] == 200 - spent
    assert abs(lasting["runs_out"] - pd.Timestamp(NOW + timedelta(days=1000 / 24))) < pd.Timedelta(days=1)
    full = forecast(frame, [Budget("", "", 100.0, period="week", tz=BERLIN)], account="x", balance=1000,
                    now=NOW).loc[ACCOUNT]  # the whole ledger's budget binds this account too
    assert full["left"] == 100 - spent and full["runs_out"] == pd.Timestamp(NOW)
    other = forecast(frame, [Budget("", "y", 1.0)], account="x", balance=1000, now=NOW).loc[ACCOUNT]
    assert pd.isna(other["limit"]) and other["left"] == 1000  # another account's budget does not


def test_a_rate_from_too_little_history_is_unknown_and_every_period_row_says_when_it_resets():
    times = pd.to_datetime([NOW - timedelta(minutes=m) for m in (5, 30)], utc=True)
    frame = pd.DataFrame({"time": times, "operation": "create", "credits": 2.0,
                          "tags": [{"experiment": "a"}, {}], "account": "x"})
    table = forecast(frame, by="experiment", account="x", balance=100, period="week", tz=BERLIN, now=NOW)
    assert table["per_day"].isna().all() and table["runs_out"].isna().all()
    week_end = pd.Timestamp(period_bounds(NOW, "week", BERLIN)[1])
    assert list(table["resets"]) == [week_end] * 3 and list(table["period"]) == ["week"] * 3


def record(ledger: Ledger, when: datetime, credits: float, **tags: str) -> None:
    ledger.record(Entry(operation="create", status=Status.ANSWERED, time=when.isoformat(timespec="milliseconds"),
                        credits=credits, image_ids=[1], tags=tags))


@pytest.fixture
def ledger_location(either_ledger) -> str:
    """These tests run on a SQLite ledger and on a PostgreSQL one."""
    return either_ledger


def test_ledger_forecast_gives_each_tag_and_the_account(ledger_location):
    ledger = Ledger(ledger_location, account="team")
    now = WEDNESDAY  # a day of the week fixed: on Sunday afternoon the +5 budget lasts until the week resets
    for day in range(10):  # grid-a spends 10 a day, grid-b 2 a day, the last 10 days
        for hour in (1, 7, 13, 19):
            when = now - timedelta(days=day, hours=hour)
            record(ledger, when, 2.5, experiment="grid-a")
            record(ledger, when, 0.5, experiment="grid-b")
    ledger.record(Entry(operation="balance", status=Status.ANSWERED, balance=240.0, tags={}))
    ledger.set_budget(experiment="grid-a", limit=1000, period="week", tz=BERLIN)
    table = ledger.forecast(by="experiment", period="week", tz=BERLIN, now=now)
    assert list(table.index) == ["grid-a", "grid-b", ACCOUNT] and table.index.name == "experiment"
    assert {"spent", "per_day", "limit", "left", "resets", "runs_out"} <= set(table.columns)
    assert table.loc["grid-a", "per_day"] == pytest.approx(10, rel=0.05)
    assert table.loc["grid-b", "per_day"] == pytest.approx(2, rel=0.05)
    assert pd.isna(table.loc["grid-a", "runs_out"])  # 70 a week against 1,000: it resets first
    assert table.loc["grid-a", "resets"] == pd.Timestamp(period_bounds(now, "week", BERLIN)[1])
    assert pd.isna(table.loc["grid-b", "runs_out"]) and pd.isna(table.loc["grid-b", "limit"])  # no budget
    account = table.loc[ACCOUNT]
    assert account["left"] == 240 and account["per_day"] == pytest.approx(12, rel=0.05)
    assert abs(account["runs_out"] - pd.Timestamp(now + timedelta(days=20))) < pd.Timedelta(days=1)
    ledger.set_budget(experiment="grid-a", limit=float(table.loc["grid-a", "spent"]) + 5, period="week", tz=BERLIN)
    soon = ledger.forecast(by="experiment", period="week", tz=BERLIN, now=now).loc["grid-a", "runs_out"]
    assert pd.Timestamp(now + timedelta(hours=6)) < soon < pd.Timestamp(now + timedelta(hours=20))  # 2 of its 6-hourly 2.5
    ledger.set_budget(experiment="grid-a", limit=1000, period=None)  # all time: it never resets; 900 left at 10 a day
    lasting = ledger.forecast(by="experiment", period="week", tz=BERLIN, now=now).loc["grid-a", "runs_out"]
    assert abs(lasting - pd.Timestamp(now + timedelta(days=90))) < pd.Timedelta(days=2)
    with pytest.raises(ConfigError, match=r"no entry in the ledger at .* carries the tag 'Experiment'; its tags: "
                                          r"experiment$"):  # a mistyped tag, not a table of all spend untagged
        ledger.forecast(by="Experiment")


def test_an_empty_ledger_forecasts_nothing(ledger_location):
    table = Ledger(ledger_location, account="team").forecast(by="experiment")
    assert list(table.index) == [ACCOUNT] and table.loc[ACCOUNT, "spent"] == 0 and pd.isna(table.loc[ACCOUNT, "runs_out"])


def test_a_client_s_ledger_forecasts_what_it_spent(connect, box):
    """Both sandbox faces: the forecast reads what the client recorded, and its balance."""
    import imagekit

    ik = connect()
    ik.usage()  # balance readings on each side: without credit headers (spec-exact) they price the create
    with imagekit.tags(experiment="fox"):
        ik.create("a fox", style=public_style(box))
    ik.usage()
    table = ik.ledger.forecast(by="experiment")
    spent = ik.ledger.total()
    assert spent > 0 and table.loc["fox", "spent"] == spent and table.loc[ACCOUNT, "spent"] == spent
    assert table.loc[ACCOUNT, "left"] == ik.usage().current_credit
    assert pd.isna(table.loc[ACCOUNT, "runs_out"])  # seconds of spending: too little history for a date
    ik.budget(limit=spent + 1, period="week")  # the account's own budget binds its row
    bound = ik.ledger.forecast(by="experiment").loc[ACCOUNT]
    assert (bound["limit"], bound["left"], bound["period"]) == (spent + 1, 1, "week")
