"""A ranking from pairwise votes: a Bradley–Terry fit by the MM iteration (Hunter, 2004), in NumPy.

Each image has a strength p; the chance that i beats j is p_i / (p_i + p_j). A tie counts as half a
win each way. Every image also plays ``PRIOR`` of a win and of a loss against a phantom of strength 1,
a small regularisation that keeps an undefeated image, a winless one and one in a group no vote
links to the rest finite; an image no vote reached stays at strength 1 (score 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["bradley_terry", "PRIOR"]

PRIOR = 0.01
"""Weight of each image's phantom win and loss against a strength-1 reference."""
_TOLERANCE = 1e-9
_MAX_ROUNDS = 100_000


def bradley_terry(count: int, votes: Sequence[tuple[int, int, bool]], prior: float = PRIOR) -> list[float]:
    """Log-strengths of ``count`` items from ``votes`` ((winner, loser, tie) by index): the higher, the
    better; 0 for an item no vote reached."""
    import numpy as np

    voted = sorted({index for winner, loser, _ in votes if winner != loser for index in (winner, loser)})
    place = {item: n for n, item in enumerate(voted)}  # only the items votes reached enter the fit
    wins = np.zeros(len(voted))
    games = np.zeros((len(voted), len(voted)))
    for winner, loser, tie in votes:
        if winner == loser:
            continue
        winner, loser = place[winner], place[loser]
        wins[winner] += 0.5 if tie else 1.0
        wins[loser] += 0.5 if tie else 0.0
        games[winner, loser] += 1.0
        games[loser, winner] += 1.0
    if not voted:
        return [0.0] * count
    strength = np.ones(len(voted))
    for _ in range(_MAX_ROUNDS):
        # MM update: p_i = (W_i + prior) / (sum_j n_ij / (p_i + p_j) + 2 prior / (p_i + 1))
        pair_sums = strength[:, None] + strength[None, :]
        denominator = (games / pair_sums).sum(axis=1) + 2 * prior / (strength + 1.0)
        updated = _rescaled((wins + prior) / denominator)
        change = np.max(np.abs(np.log(updated) - np.log(strength)))
        strength = updated
        if change < _TOLERANCE:
            break
    scores = [0.0] * count
    for item, value in zip(voted, np.log(strength)):
        scores[item] = float(value)
    return scores


def _rescaled(strength: np.ndarray) -> np.ndarray:
    """``strength`` times the factor that fits the phantom games best: the votes say nothing of the
    scale, so MM alone would creep towards it at the pace of the tiny prior (thousands of rounds);
    the factor c solves sum_i (1 - c p_i) / (1 + c p_i) = 0, by bisection on log c."""
    import numpy as np

    logs = np.log(strength)
    low, high = -logs.max() - 1.0, -logs.min() + 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if np.tanh((middle + logs) / 2).sum() < 0:
            low = middle
        else:
            high = middle
    return np.asarray(strength * np.exp((low + high) / 2))
