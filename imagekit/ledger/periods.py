"""A budget's period: the day, ISO week (from Monday) or calendar month it counts spending over, in a
time zone, the plan's own month, or all time. Pure arithmetic on aware datetimes: no store, no clock
of its own.

A period starts at local midnight (of the day, of Monday, of the 1st) in its time zone and ends where
the next one starts, so a day across a daylight-saving change lasts 23 or 25 hours. Bounds are given
in UTC, in the ledger's time format, so they compare with entries' times as text.

A *plan month* (``month@<plan start>``, made by ``plan_period``) turns where the service grants a
plan's monthly credit: each month from the plan's start, at its instant (a start on the 31st turns on
the last day of shorter months). A plan whose period is a day turns at UTC midnight, as the service's
daily grant does: that is the ``day`` period in UTC.
"""

from __future__ import annotations

from calendar import monthrange
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ConfigError

__all__ = ["PERIODS", "PLAN", "checked_period", "checked_zone", "plan_period", "bounds", "period_bounds", "stamp",
           "during"]

PERIODS = ("day", "week", "month")
"""The periods a budget may reset on (None: it never resets), besides a plan month."""
PLAN = "plan"
"""What a user asks for to count over the plan's own period; the client makes it a period
(``plan_period``) from what the service says of the plan."""
_PLAN_MONTH = "month@"


def checked_period(period: str | None) -> str | None:
    """``period`` if it is one of ``PERIODS``, a plan month, or None; else a one-line ConfigError."""
    if period is None or period in PERIODS:
        return period
    if isinstance(period, str) and period.startswith(_PLAN_MONTH):
        _plan_start(period)
        return period
    if period == PLAN:
        raise ConfigError("period 'plan' is the plan's own period, which only the service knows: set the budget "
                          "with ik.budget(..., period='plan'), or give day, week or month")
    raise ConfigError(f"period {period!r} is not a period: one of day, week, month (or None: all time; a budget "
                      "may also count over the plan's own, period='plan')")


def plan_period(unit: str | None, started: datetime | None) -> str:
    """The period of a plan whose credit is granted each ``unit`` (the plan's ``period``: month or
    day) from ``started`` (the user's ``planStartedAt``): ``month@<start>``, or ``day`` (in UTC)."""
    if unit == "day":
        return "day"
    if unit != "month" or started is None:
        raise ConfigError(f"the service did not say the plan's period (period {unit!r}, planStartedAt "
                          f"{started!r}): give day, week or month")
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return _PLAN_MONTH + stamp(started)


def _plan_start(period: str) -> datetime:
    """The start of the plan a plan month counts from; a one-line ConfigError for anything else."""
    try:
        started = datetime.fromisoformat(period.removeprefix(_PLAN_MONTH))
    except ValueError:
        started = None
    if started is None or started.tzinfo is None:
        raise ConfigError(f"period {period!r} is not a plan month (month@ and the plan's start, with its offset)")
    return started.astimezone(UTC)


def checked_zone(tz: str) -> ZoneInfo:
    """The IANA time zone named ``tz`` (``Europe/Berlin``, ``UTC``); else a one-line ConfigError."""
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise ConfigError(f"tz {tz!r} is not a time zone: give an IANA name such as 'Europe/Berlin' or 'UTC'") from None


def bounds(period: str | None, tz: str, at: datetime) -> tuple[datetime | None, datetime | None]:
    """The start (inclusive) and end (exclusive) in UTC of the ``period`` in ``tz`` that holds ``at``
    (an aware datetime); (None, None) for all time."""
    if period is None:
        return None, None
    return period_bounds(at, period, tz)


def period_bounds(at: datetime, period: str, tz: str = "UTC") -> tuple[datetime, datetime]:
    """``bounds`` of a period that is one (not all time)."""
    if checked_period(period) not in PERIODS:
        return _plan_month(at, _plan_start(period))
    zone = checked_zone(tz)
    local = at.astimezone(zone)
    day = local.date()
    if period == "day":
        first, following = day, day + timedelta(days=1)
    elif period == "week":
        first = day - timedelta(days=day.weekday())
        following = first + timedelta(days=7)
    else:
        first = day.replace(day=1)
        following = (first + timedelta(days=32)).replace(day=1)
    return _midnight(first, zone), _midnight(following, zone)


def _plan_month(at: datetime, started: datetime) -> tuple[datetime, datetime]:
    """The month of a plan started at ``started`` that holds ``at`` (both UTC-comparable)."""
    months = (at.year - started.year) * 12 + at.month - started.month
    while _add_months(started, months) > at:
        months -= 1
    while _add_months(started, months + 1) <= at:
        months += 1
    return _add_months(started, months), _add_months(started, months + 1)


def _add_months(moment: datetime, months: int) -> datetime:
    """``moment`` ``months`` later (earlier, if negative), its day kept where the month has it, else
    the month's last day."""
    index = moment.month - 1 + months
    year, month = moment.year + index // 12, index % 12 + 1
    return moment.replace(year=year, month=month, day=min(moment.day, monthrange(year, month)[1]))


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    """Local midnight starting ``day`` in ``zone``, in UTC. Where clocks jump past midnight, the
    instant they jump (PEP 495: a time in a gap takes the offset before it); where midnight comes
    twice, the first."""
    return datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(UTC)


def stamp(moment: datetime) -> str:
    """``moment`` in the ledger's time format (UTC ISO 8601 with milliseconds: sorts as text)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def during(period: str | None) -> str:
    """How a message says "in the current ``period``": `` today``, `` this week``... ("" for all time)."""
    if period and period.startswith(_PLAN_MONTH):
        return " this plan month"
    return {"day": " today", "week": " this week", "month": " this month"}.get(period or "", "")
