"""A budget's period, pure: where days, weeks and months turn in a time zone, across daylight saving."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import imagekit
from imagekit.ledger.periods import bounds, plan_period


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(("period", "tz", "at", "start", "end"), [
    # a day turns at local midnight: 23:00 UTC in Berlin's winter
    ("day", "Europe/Berlin", utc(2026, 1, 14, 22, 59, 59), utc(2026, 1, 13, 23), utc(2026, 1, 14, 23)),
    ("day", "Europe/Berlin", utc(2026, 1, 14, 23), utc(2026, 1, 14, 23), utc(2026, 1, 15, 23)),
    ("day", "UTC", utc(2026, 1, 14, 23), utc(2026, 1, 14), utc(2026, 1, 15)),
    # the days clocks change: 23 hours in spring, 25 in autumn
    ("day", "Europe/Berlin", utc(2026, 3, 29, 12), utc(2026, 3, 28, 23), utc(2026, 3, 29, 22)),
    ("day", "Europe/Berlin", utc(2026, 10, 25, 12), utc(2026, 10, 24, 22), utc(2026, 10, 25, 23)),
    ("day", "America/New_York", utc(2026, 11, 1, 12), utc(2026, 11, 1, 4), utc(2026, 11, 2, 5)),
    # where clocks jump past midnight itself, the day starts when they jump
    ("day", "America/Santiago", utc(2022, 9, 11, 12), utc(2022, 9, 11, 4), utc(2022, 9, 12, 3)),
    # a week runs Monday to Monday; this one holds the autumn change (7 days and 1 hour)
    ("week", "Europe/Berlin", utc(2026, 10, 25, 22, 59), utc(2026, 10, 18, 22), utc(2026, 10, 25, 23)),
    ("week", "Europe/Berlin", utc(2026, 10, 25, 23), utc(2026, 10, 25, 23), utc(2026, 11, 1, 23)),
    ("week", "UTC", utc(2026, 11, 29, 23, 59), utc(2026, 11, 23), utc(2026, 11, 30)),
    # a month turns on the 1st, local time: Berlin's November begins on 31 October, 23:00 UTC
    ("month", "Europe/Berlin", utc(2026, 10, 31, 22, 59), utc(2026, 9, 30, 22), utc(2026, 10, 31, 23)),
    ("month", "Europe/Berlin", utc(2026, 10, 31, 23), utc(2026, 10, 31, 23), utc(2026, 11, 30, 23)),
    ("month", "Asia/Tokyo", utc(2026, 12, 31, 15), utc(2026, 12, 31, 15), utc(2027, 1, 31, 15)),
    ("month", "UTC", utc(2028, 2, 29, 12), utc(2028, 2, 1), utc(2028, 3, 1)),
    (None, "Europe/Berlin", utc(2026, 1, 1), None, None),
])
def test_a_period_starts_at_local_midnight_and_ends_where_the_next_starts(period, tz, at, start, end):
    assert bounds(period, tz, at) == (start, end)


def test_consecutive_days_meet_across_a_whole_year_of_clock_changes():
    at = utc(2026, 1, 1, 12)
    for _ in range(366):
        start, end = bounds("day", "Europe/Berlin", at)
        assert start <= at < end and timedelta(hours=23) <= end - start <= timedelta(hours=25)
        assert bounds("day", "Europe/Berlin", end)[0] == end
        at += timedelta(days=1)


PLAN_31 = plan_period("month", utc(2026, 1, 31, 9, 30))


@pytest.mark.parametrize(("at", "start", "end"), [
    # a plan month turns at the plan's start instant each month; past a short month's end, on its last day
    (utc(2026, 1, 31, 9, 30), utc(2026, 1, 31, 9, 30), utc(2026, 2, 28, 9, 30)),
    (utc(2026, 2, 28, 9, 29), utc(2026, 1, 31, 9, 30), utc(2026, 2, 28, 9, 30)),
    (utc(2026, 2, 28, 9, 30), utc(2026, 2, 28, 9, 30), utc(2026, 3, 31, 9, 30)),
    (utc(2026, 4, 30, 12), utc(2026, 4, 30, 9, 30), utc(2026, 5, 31, 9, 30)),
    (utc(2028, 2, 29, 23), utc(2028, 2, 29, 9, 30), utc(2028, 3, 31, 9, 30)),
    (utc(2027, 1, 1), utc(2026, 12, 31, 9, 30), utc(2027, 1, 31, 9, 30)),
    (utc(2025, 12, 31, 10), utc(2025, 12, 31, 9, 30), utc(2026, 1, 31, 9, 30)),  # before the plan: as if it ran
])
def test_a_plan_month_turns_where_the_service_grants_the_monthly_credit(at, start, end):
    assert PLAN_31 == "month@2026-01-31T09:30:00.000+00:00"
    assert bounds(PLAN_31, "Asia/Tokyo", at) == (start, end)  # the plan's instant, whatever the zone shown


def test_plan_months_meet_for_years_and_a_daily_plan_turns_at_utc_midnight():
    period, at = plan_period("month", datetime(2026, 3, 30, 23, 59)), utc(2026, 3, 30, 23, 59)  # naive: UTC
    for _ in range(60):
        start, end = bounds(period, "UTC", at)
        assert start <= at < end and start.day in (28, 29, 30) and bounds(period, "UTC", end)[0] == end
        at = end
    assert plan_period("day", utc(2026, 1, 31, 9, 30)) == "day"


@pytest.mark.parametrize(("options", "said"), [
    ({"period": "year"}, r"one of day, week, month \(or None: all time; a budget may also count over the plan.s own"),
    ({"period": "plan"}, r"only the service knows: set the budget with ik.budget\(..., period='plan'\)"),
    ({"period": "month@2026-01-31"}, "is not a plan month"),
    ({"period": "month@2026-01-31T09:30:00"}, "is not a plan month"),
    ({"period": "month@/etc/passwd"}, "is not a plan month"),
    ({"period": "month", "tz": "Mars/Olympus"}, "IANA name"),
    ({"alerts": (0.5, 0)}, "share of the limit"),
    ({"alerts": ("80%",)}, "share of the limit"),
    ({"webhook": "ftp://example.org"}, "http:// or https:// URL"),
])
def test_a_budget_with_a_bad_period_zone_alert_or_webhook_is_refused_in_one_line(tmp_path, options, said):
    with pytest.raises(imagekit.ConfigError, match=said):
        imagekit.Ledger(tmp_path / "l.sqlite").set_budget(experiment="x", limit=10, **options)
