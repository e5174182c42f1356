"""The uniform random player: the floor every other agent is measured against."""

from __future__ import annotations

import numpy as np


class RandomAgent:
    """Picks uniformly among the legal actions of each game."""

    name = "random"

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        return np.argmax(rng.random(mask.shape) * mask, axis=1).astype(np.int64)

    def reset(self) -> None:
        pass
