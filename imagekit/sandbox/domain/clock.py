"""The sandbox clock: real UTC time plus an offset that tests can advance (kept in the database,
where every worker of a shared database reads it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ..interface.errors import SandboxError
from ..store.db import Database
from ..store.tables import State

CLOCK_KEY = "clock_offset_seconds"
MAX_OFFSET_SECONDS = 50 * 365 * 86400
"""How far ahead the clock may run: decades of grants, far from the calendar's end."""


def wall_now() -> datetime:
    """Real naive-UTC time, whatever the sandbox clock says: leases are about live processes."""
    return datetime.now(UTC).replace(tzinfo=None)


class Clock:
    """Naive-UTC ``now()`` shifted by an advanceable offset, so grants and periods can be exercised."""

    def __init__(self, db: Database) -> None:
        self._db = db
        with db.read() as session:
            row = session.get(State, CLOCK_KEY)
            self.load(row.value if row else None)

    def load(self, kept: str | None) -> None:
        """Take the offset as the database keeps it (another worker may have advanced it)."""
        self._offset = timedelta(seconds=float(kept)) if kept else timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC).replace(tzinfo=None) + self._offset

    @property
    def offset_seconds(self) -> float:
        return self._offset.total_seconds()

    def advance(self, seconds: float) -> datetime:
        """Move the clock forward (never back: periods and grants only move forward)."""
        if seconds < 0:
            raise ValueError("the sandbox clock only moves forward")
        with self._db.write() as session:
            row = self._db.locked(session, State, CLOCK_KEY)  # two workers advancing add up
            offset = float(row.value) if row else 0.0
            if offset + seconds > MAX_OFFSET_SECONDS:
                raise SandboxError("invalid_request", f"seconds: the clock may run at most {MAX_OFFSET_SECONDS} s "
                                   f"ahead ({offset:.0f} s now)")
            if row is None:
                session.add(State(key=CLOCK_KEY, value=str(offset + seconds)))
            else:
                row.value = str(offset + seconds)
        self.load(str(offset + seconds))
        return self.now()


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 with a Z suffix, the way the interface writes date-times."""
    if moment is None:
        return None
    return moment.replace(microsecond=(moment.microsecond // 1000) * 1000).isoformat(timespec="milliseconds") + "Z"
