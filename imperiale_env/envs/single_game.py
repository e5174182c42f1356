"""The one game behind the AEC and Gymnasium single-game environments: a batch of one.

The environments step the batched engine (:class:`~imperiale_env.batch.BatchGame` of one game,
one compiled call a step) as the vector environment does, so that every environment runs on
one engine; the reference :class:`~imperiale_env.reference.game.Game` stays the oracle the
tests compare it with.  What only the reference game offers (the table drawn for people, the
score events told in words, the clause that made a card legal: ``Game.play_rule``) comes from
:attr:`SingleGame.game`, a reference game rebuilt from the seed and the actions played, on
demand and only as far as the actions that are new since the last look: the plain loop of an
environment without a render mode never builds it.

A copy or a pickle carries the batch, the seed and the actions; the rebuilt game is left out and
rebuilt when asked for.  The first environment of a new install compiles the batched engine
into numba's cache (some 40 s, once; then under a second from the cache).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from imperiale_env.batch import BatchGame
from imperiale_env.batch.state import NONE
from imperiale_env.core import rewards
from imperiale_env.core.rules import Rules
from imperiale_env.reference.game import Game

__all__ = ["SingleGame", "reference_game"]


def reference_game(rules: Rules, game_seed: int, start: dict[str, Any] | None, episode: str) -> Game:
    """The reference game a single-game environment plays: dealt from ``game_seed`` (as the batched
    engine deals the same seed), from ``start`` (or 0 to 0), one deal for ``episode="deal"``."""
    single = episode == "deal"
    if start is None:
        return Game(rules, seed=game_seed, single_deal=single)
    return Game(rules, seed=game_seed, dealer=start["dealer"], imperiales=start["imperiales"], points=start["points"],
                single_deal=single)


class SingleGame:
    """One game of L'Impériale on ``BatchGame(1)``: its seat to act, legal actions, observations,
    step and end rewards, each read from the batch state of its one slot."""

    def __init__(self, rules: Rules, episode: str):
        self.rules = rules
        self.episode = episode
        self._batch = BatchGame(rules, 1, single_deal=episode == "deal")
        self._action = np.zeros(1, dtype=np.int64)
        self._seats = [np.array([p], dtype=np.int64) for p in range(rules.players)]
        self.seed: int | None = None
        self.start: dict[str, Any] | None = None
        #: Every action played in this game, in order (what the rebuilt reference game replays).
        self.actions: list[int] = []
        self._replay: Game | None = None
        self._replayed = 0

    def reset(self, game_seed: int, start: dict[str, Any] | None) -> None:
        """Deal the game of ``game_seed`` (the reference game with that seed deals the same cards)
        from ``start`` (``dict(imperiales, points, dealer)``, see
        :func:`~imperiale_env.envs.env_checks.check_start`) or from 0 to 0 with the seeded dealer."""
        self.seed, self.start = game_seed, start
        seeds = np.array([game_seed], dtype=np.uint64)
        if start is None:
            self._batch.reset(seeds)
        else:
            self._batch.reset(seeds, dealer=start["dealer"], imperiales=np.array([start["imperiales"]]),
                              points=np.array([start["points"]]))
        self.actions = []
        self._replay = None
        self._replayed = 0

    # ------------------------------------------------------------------ the state of the slot

    @property
    def over(self) -> bool:
        """The game waits on no decision any more."""
        return self._batch.kind[0] == NONE

    @property
    def current_player(self) -> int | None:
        """The seat to act; ``None`` once the game is over."""
        return None if self.over else int(self._batch.current_player[0])

    @property
    def winner(self) -> int | None:
        winner = int(self._batch.winner[0])
        return None if winner < 0 else winner

    @property
    def imperiales(self) -> list[int]:
        return self._batch.imperiales[0].tolist()

    @property
    def points(self) -> list[int]:
        return self._batch.points[0].tolist()

    # ------------------------------------------------------------------ decisions

    def legal_mask(self) -> np.ndarray:
        """The legal actions of the seat to act, a fresh ``(43,)`` bool (all False once over)."""
        return self._batch.legal_action_mask()[0]

    def is_legal(self, action: int) -> bool:
        """Whether the action id ``action`` (0..42) is legal now."""
        return not self.over and bool(int(self._batch.action_bits()[0]) >> action & 1)

    def observe(self, seat: int) -> np.ndarray:
        """What ``seat`` sees now, a fresh ``(OBS_SIZE,)`` uint8 (fresh because the environments hand
        it to the caller, who may keep it); a seat not to act sees no pending decision."""
        acting = not self.over and seat == self._batch.current_player[0]
        return self._batch.observe(players=None if acting else self._seats[seat])[0]

    def step(self, action: int) -> None:
        """Play the legal action id ``action`` for the seat to act (the caller has checked it)."""
        self._action[0] = action
        self._batch.step(self._action)
        self.actions.append(action)

    def end_rewards(self) -> np.ndarray:
        """The zero-sum rewards of the finished game, ``(P,)`` float32, as
        :func:`imperiale_env.core.rewards.end_rewards` gives them to the batched engine."""
        b = self._batch
        return rewards.end_rewards(b.winner[:1], b.value_at_start[:1],
                                   rewards.standing(b.imperiales[:1], b.points[:1]))[0]

    # ------------------------------------------------------------------ the reference game, rebuilt

    @property
    def game(self) -> Game | None:
        """The reference game at this point of play (read it, do not step it): the game of the same
        seed and start, stepped through :attr:`actions`; ``None`` before the first reset."""
        if self.seed is None:
            return None
        if self._replay is None:
            self._replay, self._replayed = reference_game(self.rules, self.seed, self.start, self.episode), 0
        for action in self.actions[self._replayed:]:
            self._replay.step(action)
        self._replayed = len(self.actions)
        return self._replay

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_replay"], state["_replayed"] = None, 0
        return state
