"""Retry decisions as small pure functions: no I/O, no clock, no randomness of their own.

The one rule that matters: an operation may cost credits, so a request that may have reached the
server is never sent again unless it is a read. Refusals the server makes before doing any work
(429, 503) and failures before the request left (connect errors) are safe to repeat for any method.
"""

from __future__ import annotations

import enum
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
REFUSED_STATUSES = frozenset({429, 503})  # the server refused before doing any work
TRANSIENT_STATUSES = frozenset({500, 502, 503, 504})  # worth a second try, but only for reads


class Failure(enum.Enum):
    """How a request failed without a response."""

    NOT_SENT = "not_sent"
    """It never left: connect error or connect/pool timeout."""
    MAYBE_SENT = "maybe_sent"
    """It may have reached the server: read/write timeout, dropped connection."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how long to wait before sending a request again."""

    max_retries: int = 2
    """Extra attempts after the first one."""
    backoff_base: float = 0.5
    """Delay before the first retry, doubled for each further one (before jitter)."""
    backoff_cap: float = 8.0
    """Longest computed backoff."""
    max_retry_after: float = 60.0
    """Longest server-requested wait honoured; a longer Retry-After ends the retries."""

    def decide(
        self,
        method: str,
        outcome: int | Failure,
        attempt: int,
        *,
        retry_after: float | None = None,
        rand: Callable[[], float] = random.random,
    ) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None to stop.

        ``attempt`` counts the attempts already failed, starting at 0 for the first.
        """
        if attempt >= self.max_retries or not _retryable(method, outcome):
            return None
        if retry_after is not None and outcome in REFUSED_STATUSES:
            return retry_after if retry_after <= self.max_retry_after else None
        return backoff(attempt, self.backoff_base, self.backoff_cap, rand)


def _retryable(method: str, outcome: int | Failure) -> bool:
    idempotent = method.upper() in IDEMPOTENT_METHODS
    if outcome is Failure.NOT_SENT:
        return True
    if outcome is Failure.MAYBE_SENT:
        return idempotent
    return outcome in REFUSED_STATUSES or (idempotent and outcome in TRANSIENT_STATUSES)


def backoff(attempt: int, base: float, cap: float, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff with "equal jitter": a delay in [d/2, d] where d = min(cap, base * 2**attempt)."""
    delay: float = min(cap, base * 2.0 ** attempt)
    return delay / 2 + delay / 2 * rand()


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP-date), or None if absent/unreadable.

    ``now`` is the current POSIX time, used for the HTTP-date form; dates in the past give 0.
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # "-0000" parses naive; HTTP-dates are always GMT
            when = when.replace(tzinfo=UTC)
        return max(0.0, when.timestamp() - now)
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds
