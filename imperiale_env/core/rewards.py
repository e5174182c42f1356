"""The rewards of a finished game or deal, one definition for every engine and environment.

A game won gives +1 to the winner and ``-1/(P-1)`` to each other player (zero-sum).  A deal
that ends without a winner (one deal a game) gives each player the change of his value over
it in impériales, points counting 1/24, minus the mean change of the others (zero-sum too).
"""

from __future__ import annotations

import numpy as np

from imperiale_env.core.events import POINTS_PER_IMPERIALE


def standing(imperiales: np.ndarray, points: np.ndarray) -> np.ndarray:
    """A player's standing in impériales: his impériales plus his points over 24."""
    return np.asarray(imperiales) + np.asarray(points) / POINTS_PER_IMPERIALE


def end_rewards(winner: np.ndarray, start_value: np.ndarray, end_value: np.ndarray) -> np.ndarray:
    """``(n, P)`` float32 rewards of ``n`` ended games: ``winner`` ``(n,)`` the winning seat or -1
    (no winner: the deal's change of value decides), the values ``(n, P)`` at the start and end."""
    winner = np.asarray(winner)
    n, P = np.shape(end_value)
    rewards = np.zeros((n, P), dtype=np.float32)
    won = winner >= 0
    rewards[won] = -1.0 / (P - 1)
    rewards[np.flatnonzero(won), winner[won]] = 1.0
    if not won.all():
        change = np.asarray(end_value)[~won] - np.asarray(start_value)[~won]
        others = (change.sum(axis=1, keepdims=True) - change) / (P - 1)
        rewards[~won] = (change - others).astype(np.float32)
    return rewards
