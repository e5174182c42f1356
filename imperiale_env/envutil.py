"""Small helpers shared by the AEC, Gymnasium and vector environments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .batch import BatchGame
from .rules import Rules

EPISODES = ("game", "deal")
START_KEYS = ("imperiales", "points", "dealer")


def check_episode(episode: str) -> str:
    if episode not in EPISODES:
        raise ValueError(f"episode must be 'game' or 'deal', got {episode!r}")
    return episode


def check_start(rules: Rules, start: Mapping[str, Any] | None, episode: str) -> dict[str, Any] | None:
    """Validate a start score ``dict(imperiales=[..], points=[..], dealer=k)`` (each key optional:
    no impériales, no points, the seeded first dealer); returns a normalised copy."""
    if start is None:
        return None
    if episode != "deal":
        raise ValueError("a start score is for episode='deal' (a game always starts from 0 to 0)")
    if not isinstance(start, Mapping):
        raise ValueError(f"start must be a dict with keys {', '.join(START_KEYS)}, got {start!r}")
    unknown = set(start) - set(START_KEYS)
    if unknown:
        raise ValueError(f"unknown start keys {sorted(unknown)} (allowed: {', '.join(START_KEYS)})")
    P = rules.players
    out: dict[str, Any] = {}
    for key, high in (("imperiales", rules.target_imperiales - 1), ("points", 23)):
        values = start.get(key, [0] * P)
        try:
            values = [int(v) for v in values]
        except (TypeError, ValueError):
            raise ValueError(f"start[{key!r}] must be {P} integers, got {values!r}") from None
        if len(values) != P or any(v < 0 or v > high for v in values):
            raise ValueError(f"start[{key!r}] must be {P} integers in 0..{high}, got {values!r}")
        out[key] = values
    dealer = start.get("dealer")
    if dealer is not None:
        if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= int(dealer) < P:
            raise ValueError(f"start['dealer'] must be a seat 0..{P - 1}, got {dealer!r}")
        dealer = int(dealer)
    out["dealer"] = dealer
    return out


def draw_game_seed(rng: np.random.Generator) -> int:
    """An engine game seed (64 bits) drawn from the environment's generator."""
    return int(rng.integers(0, 2**64, dtype=np.uint64))


def reset_one(game: BatchGame, game_seed: int, start: dict[str, Any] | None) -> None:
    """Reset a one-game :class:`BatchGame` with ``game_seed`` from ``start`` (or 0 to 0)."""
    seeds = np.array([game_seed], dtype=np.uint64)
    if start is None:
        game.reset(seeds)
    else:
        game.reset(seeds, dealer=start["dealer"], imperiales=np.array([start["imperiales"]]),
                   points=np.array([start["points"]]))


def terminal_rewards(game: BatchGame, i: int = 0) -> np.ndarray:
    """The engine's end-of-game rewards of game ``i`` when it ended with a winner (+1 to him,
    ``-1/(P-1)`` to each other player); used when a game ends before its first decision."""
    P = game.players
    rewards = np.full(P, -1.0 / (P - 1), dtype=np.float32)
    rewards[int(game.winner[i])] = 1.0
    return rewards
