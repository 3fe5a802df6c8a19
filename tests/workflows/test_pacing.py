"""When a batch polls a generation: learned from the brackets its polls put around each one."""

from __future__ import annotations

import random
import statistics

import pytest

from imagekit.workflows.batches.pacing import ON_TIME, Pace


def settle(pace: Pace, end: float, poll_takes: float) -> tuple[int, float]:
    """One generation ending ``end`` seconds after its create was sent, polled as the runner polls
    it; a poll sees the state halfway through its ``poll_takes`` seconds. Returns the polls sent and
    how long after the end the runner knew (the slot's idle time)."""
    asked, pending_at, polls = pace.first_poll(), None, 0
    while True:
        polls += 1
        if asked + poll_takes / 2 >= end:
            pace.learn(pending_at, asked)
            return polls, asked + poll_takes - end
        pending_at = asked
        asked += poll_takes + pace.interval()


def jittered(pace: Pace, rows: int, poll_takes: float, seed: int = 7) -> list[tuple[int, float]]:
    """``rows`` generations of 0.25 s whose ends, seen from the client, vary by a few ms."""
    draw = random.Random(seed)
    return [settle(pace, 0.26 + draw.gauss(0, 0.006), poll_takes) for _ in range(rows)]


@pytest.mark.parametrize("poll_takes", [0.002, 0.015, 0.08])
def test_most_first_polls_find_the_generation_done_and_few_are_late_by_much(poll_takes):
    # Once the first poll aimed at the middle of the ends: two polls in three came early and cost
    # a second round trip each.
    pace = Pace(poll_interval=0.01)
    settled = jittered(pace, 600, poll_takes)[100:]
    on_time = sum(polls == 1 for polls, _ in settled) / len(settled)
    assert on_time >= ON_TIME - 0.15  # more when polls are slow: the bracket's middle lies later
    assert statistics.mean(polls for polls, _ in settled) < 1.45
    # Known done within about one poll's time plus a little of the ends' spread.
    assert statistics.mean(idle for _, idle in settled) < poll_takes + 0.02


def test_an_aim_that_is_too_late_comes_down_within_a_few_rows():
    pace = Pace(poll_interval=0.01)
    pace.due = 5.0  # learned while the service was slow
    for _ in range(20):
        settle(pace, 0.25, 0.01)
    assert pace.due < 0.3


def test_an_aim_that_is_too_early_moves_to_the_bracket_at_once():
    pace = Pace(poll_interval=0.01)
    pace.due = 0.05  # learned while the service was fast
    settle(pace, 2.0, 0.01)
    assert pace.due >= 1.9


def test_nothing_learned_polls_at_once_and_slow_generations_are_polled_less_often():
    pace = Pace(poll_interval=0.01)
    assert pace.first_poll() == 0 and pace.interval() == 0.01
    pace.learn(20.0, 22.0)
    assert pace.first_poll() == 21.0 and pace.interval() == pytest.approx(21.0 / 50)
