"""The Bradley–Terry ranking: the same order as choix's ILSR on the same votes, finite everywhere."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import imagekit
from imagekit.decisions.ranking import bradley_terry


def simulated_votes(count: int, votes: int, seed: int) -> list[tuple[int, int, bool]]:
    """Votes between items of known strengths (a tie now and then)."""
    rng = random.Random(seed)
    strengths = [rng.uniform(-2, 2) for _ in range(count)]
    made = []
    for _ in range(votes):
        i, j = rng.sample(range(count), 2)
        if rng.random() < 0.1:
            made.append((i, j, True))
        else:
            first_wins = rng.random() < 1 / (1 + math.exp(strengths[j] - strengths[i]))
            made.append((i, j, False) if first_wins else (j, i, False))
    return made


def as_choix(votes: list[tuple[int, int, bool]]) -> list[tuple[int, int]]:
    """The votes in choix's form, each counted twice so that a tie is one whole win each way (half a
    win each way, doubled): the same likelihood, squared, so the same maximum."""
    return [pair for winner, loser, tie in votes
            for pair in (((winner, loser), (loser, winner)) if tie else ((winner, loser), (winner, loser)))]


@pytest.mark.parametrize(("count", "votes", "seed"), [(5, 60, 1), (12, 200, 2), (30, 600, 3)])
def test_the_order_is_choix_ilsr_pairwise_order(count, votes, seed):
    import choix  # here, not at the top: choix loads scipy.stats, 2 CPU-s of every test process's collection

    made = simulated_votes(count, votes, seed)
    ours = np.array(bradley_terry(count, made))
    theirs = choix.ilsr_pairwise(count, as_choix(made), alpha=1e-4)
    assert list(np.argsort(-ours)) == list(np.argsort(-theirs))
    # and the strengths themselves, up to choix's centring and the tiny regularisations
    assert np.allclose(ours - ours.mean(), theirs - theirs.mean(), atol=0.05)


def test_undefeated_winless_and_unlinked_items_stay_finite():
    scores = bradley_terry(6, [(0, 1, False), (0, 1, False), (1, 2, False), (3, 4, True)])
    assert all(math.isfinite(score) for score in scores)
    assert scores[0] > scores[1] > scores[2] and scores[3] == pytest.approx(scores[4]) and scores[5] == 0
    assert bradley_terry(3, []) == [0.0, 0.0, 0.0]


def test_the_desk_ranks_by_votes_then_ratings(four):
    desk = imagekit.review(four)
    a, b, c, d = four
    desk.rate(d, 5)
    desk.rate(b, 1)
    assert desk.ranking()["image_id"].tolist() == [d.id, b.id, a.id, c.id]  # no votes: ratings, then unrated
    for winner, loser in [(c, a), (c, b), (a, b), (a, b)]:
        desk.vote(winner, loser)
    ranked = desk.ranking()
    assert ranked["image_id"].tolist() == [c.id, a.id, d.id, b.id]  # d: no vote (score 0), above b's losses
    assert ranked["rank"].tolist() == [1, 2, 3, 4] and ranked["score"].is_monotonic_decreasing
    fitted = bradley_terry(4, [(2, 0, False), (2, 1, False), (0, 1, False), (0, 1, False)])
    assert ranked["score"].tolist() == pytest.approx([fitted[2], fitted[0], 0.0, fitted[1]])
