"""When a batch polls a generation: learned from the brackets its polls put around each one."""

from __future__ import annotations

import pytest

from imagekit.workflows.pacing import Pace


def settle(pace: Pace, duration: float, poll_takes: float) -> int:
    """One generation of ``duration`` seconds, polled as the runner polls it; each poll is answered
    ``poll_takes`` seconds after it is sent (it sees the state at its middle). Returns the polls."""
    asked, pending_at, polls = pace.first_poll(), None, 0
    while True:
        polls += 1
        if asked + poll_takes / 2 >= duration:
            pace.learn(pending_at, asked)
            return polls
        pending_at = asked
        asked += poll_takes + pace.interval()


@pytest.mark.parametrize("poll_takes", [0.002, 0.03, 0.08])
def test_the_first_poll_settles_near_the_end_of_a_generation_however_slow_polls_are(poll_takes):
    # Once the estimate learned from its own late polls only, and rose each time a poll took longer
    # than its margin (on a loaded machine: 0.25 s generations polled at 0.88 s).
    pace = Pace(poll_interval=0.01)
    polls = [settle(pace, 0.25, poll_takes) for _ in range(200)]
    assert 0.25 - poll_takes - 0.03 <= pace.duration <= 0.25 + 0.02
    assert sum(polls[-100:]) / 100 < 2.5  # mostly one or two polls a generation


def test_an_estimate_that_is_too_long_comes_down():
    pace = Pace(poll_interval=0.01)
    pace.duration = 5.0  # learned while the service was slow
    for _ in range(100):
        settle(pace, 0.25, 0.01)
    assert pace.duration < 0.3


def test_nothing_learned_polls_at_once_and_slow_generations_are_polled_less_often():
    pace = Pace(poll_interval=0.01)
    assert pace.first_poll() == 0 and pace.interval() == 0.01
    pace.learn(20.0, 22.0)
    assert pace.first_poll() == 21.0 and pace.interval() == pytest.approx(2.1)
