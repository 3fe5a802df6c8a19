"""Retry decisions: pure functions, table-tested."""

from __future__ import annotations

import pytest

from imagekit._retry import Failure, RetryPolicy, backoff, parse_retry_after

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
POLICY = RetryPolicy(max_retries=3, backoff_base=1.0, backoff_cap=8.0, max_retry_after=30.0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("0", 0.0),
        ("7", 7.0),
        (" 12 ", 12.0),
        ("1.5", 1.5),
        ("-3", None),
        ("nan", None),
        ("inf", None),
        ("soon", None),
        ("Tue, 14 Nov 2023 22:13:50 GMT", 30.0),  # HTTP-date 30 s ahead
        ("Tue, 14 Nov 2023 22:13:50 -0000", 30.0),  # parses naive; HTTP-dates are GMT
        ("Tue, 14 Nov 2023 22:13:00 GMT", 0.0),  # in the past
        ("Tue, 99 Nov 2023 25:61:00 GMT", None),
    ],
)
def test_parse_retry_after(value, expected):
    assert parse_retry_after(value, NOW) == expected


@pytest.mark.parametrize(("attempt", "low", "high"), [(0, 0.5, 1.0), (1, 1.0, 2.0), (2, 2.0, 4.0), (3, 4.0, 8.0), (9, 4.0, 8.0)])
def test_backoff_has_equal_jitter_and_a_cap(attempt, low, high):
    assert backoff(attempt, 1.0, 8.0, rand=lambda: 0.0) == low
    assert backoff(attempt, 1.0, 8.0, rand=lambda: 1.0) == high
    assert low <= backoff(attempt, 1.0, 8.0) <= high


MAYBE, NOT_SENT = Failure.MAYBE_SENT, Failure.NOT_SENT


@pytest.mark.parametrize(
    ("method", "outcome", "retry"),
    [
        # never left the machine: safe for any method
        ("GET", NOT_SENT, True),
        ("POST", NOT_SENT, True),
        # may have reached the server: only reads go again, a POST may already be charged
        ("GET", MAYBE, True),
        ("POST", MAYBE, False),
        # refused before any work: safe for any method
        ("POST", 429, True),
        ("POST", 503, True),
        ("GET", 429, True),
        # the server may have done the work
        ("POST", 500, False),
        ("POST", 502, False),
        ("POST", 504, False),
        ("GET", 500, True),
        ("GET", 502, True),
        ("GET", 504, True),
        # a full disk lasts until someone frees space: no repeat helps
        ("POST", 507, False),
        ("GET", 507, False),
        # client errors are final
        ("GET", 400, False),
        ("GET", 404, False),
        ("POST", 402, False),
        ("POST", 409, False),
        ("get", 500, True),
    ],
)
def test_what_is_retried(method, outcome, retry):
    assert (POLICY.decide(method, outcome, 0, rand=lambda: 0.0) is not None) is retry


def test_retries_stop_after_max_retries():
    assert [POLICY.decide("GET", 503, attempt, rand=lambda: 1.0) for attempt in range(5)] == [1.0, 2.0, 4.0, None, None]
    assert RetryPolicy(max_retries=0).decide("GET", NOT_SENT, 0) is None


@pytest.mark.parametrize(
    ("status", "retry_after", "expected"),
    [
        (429, 3.0, 3.0),  # honoured as given
        (503, 0.0, 0.0),
        (503, 30.0, 30.0),  # at the cap
        (429, 31.0, None),  # beyond the cap: give up, the caller sees retry_after on the error
        (500, 3.0, None),  # a POST 500 is never retried, Retry-After or not
    ],
)
def test_retry_after_is_honoured_up_to_a_cap(status, retry_after, expected):
    assert POLICY.decide("POST", status, 0, retry_after=retry_after) == expected


def test_retry_after_on_a_get_500_falls_back_to_backoff():
    assert POLICY.decide("GET", 500, 0, retry_after=20.0, rand=lambda: 0.0) == 0.5
