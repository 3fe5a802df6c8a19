"""A budget's period: the day, ISO week (from Monday) or calendar month it counts spending over, in a
time zone, or all time. Pure arithmetic on aware datetimes: no store, no clock of its own.

A period starts at local midnight (of the day, of Monday, of the 1st) in its time zone and ends where
the next one starts, so a day across a daylight-saving change lasts 23 or 25 hours. Bounds are given
in UTC, in the ledger's time format, so they compare with entries' times as text.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ConfigError

__all__ = ["PERIODS", "checked_period", "checked_zone", "bounds", "period_bounds", "stamp", "during"]

PERIODS = ("day", "week", "month")
"""The periods a budget may reset on (None: it never resets)."""


def checked_period(period: str | None) -> str | None:
    """``period`` if it is one of ``PERIODS`` or None; else a one-line ConfigError."""
    if period is not None and period not in PERIODS:
        raise ConfigError(f"period {period!r} is not a period: one of day, week, month (or None: all time)")
    return period


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
    checked_period(period)
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
    return {"day": " today", "week": " this week", "month": " this month"}.get(period or "", "")
