"""A Gymnasium ``VectorEnv`` of ``num_envs`` games for self-play: every seat is the learner.

Built on :class:`~imperiale_env.batch.BatchGame` with ``auto_next_game=True``: the games are
stepped together in numpy, and a game that ends is replaced at once by the next one.

Each step is **one decision in every game, by the player to act there** (the seats
alternate as the rules say, not in a fixed cycle), so the learner plays all seats:

============================  =========================================================
observation                   ``(num_envs, OBS_SIZE)`` uint8, each row the view of the
                              player to act in that game (observation version 1, seats
                              relative to him, as in the AEC env); with
                              ``obs_type="features"``, ``(num_envs, FEATURE_SIZE)``
                              float32, the features of those views
action                        ``(num_envs,)`` ids in ``0..42`` (``MultiDiscrete``)
``info["acting_seat"]``       ``(num_envs,)`` int64: the seat to act on the returned
                              observation (in the new game after an autoreset)
``info["action_mask"]``       ``(num_envs, 43)`` int8: that seat's legal actions
``info["last_seat"]``         ``(num_envs,)`` int64: the seat whose action this step applied
reward                        ``(num_envs,)`` float32: the reward of ``last_seat``
``info["rewards_all"]``       ``(num_envs, players)`` float32: this step's reward of every seat
terminated                    ``(num_envs,)`` bool: the game ended at this step
truncated                     always False (games end by the rules)
============================  =========================================================

Rewards come only when a game ends: +1 to the winner, -1/(players-1) to the others
(``episode="deal"``: one deal per episode, from 0 to 0 or from ``start=dict(imperiales=[..],
points=[..], dealer=k)`` (each key optional), rewarded by the zero-sum change of the score).
The terminal reward of a seat that did not make the last move is only in
``info["rewards_all"]``: a self-play learner credits it to the last transition of each seat.

Autoreset is ``SAME_STEP`` (``metadata["autoreset_mode"]``): on the step a game ends, the
returned observation, ``acting_seat`` and ``action_mask`` are the first decision of the next
game, and the finished game is in ``info["final_obs"]`` (an object array with the final
observation of ``last_seat`` for each ended game, ``None`` elsewhere; mask
``info["_final_obs"]``) and ``info["final_info"]`` (``winner`` (-1: none), ``imperiales``,
``points`` (``(players,)`` each), ``game_seed``, ``rewards`` (``(players,)``), each with its
``_key`` mask; mask ``info["_final_info"]``).  The next game's seed follows from the last
(:func:`~imperiale_env.core.shuffle.next_game_seed`); :attr:`ImperialeVectorEnv.game_seeds` are
those of the games in play, so the reference :class:`~imperiale_env.reference.game.Game` with such a
seed and the same actions plays the same game.

Actions are an integer array (numpy integers or Python ints); a float, bool or string array is
refused with ``TypeError``.  An illegal action, or an id outside 0..42, raises ``ValueError``
naming the game, the action and the legal ones, and changes nothing (a trainer must sample from
the mask; the single-agent ``Imperiale-v1`` penalises illegal actions instead).

Every game seed is in ``[0, 2**63)`` (drawn from :attr:`np_random` with the top bit cleared,
and :func:`~imperiale_env.core.shuffle.next_game_seed` keeps it so), so it fits an int64 and is a
valid ``--seed`` of the command line.  ``reset(seed=...)`` takes an integer in ``[0, 2**63)``;
the start score is given to the constructor (``start=``), not to ``reset``: ``options`` with
``start`` is refused, other keys are ignored with a warning.  Bad arguments (``num_envs`` not
a positive integer, ``copy`` / ``final_obs`` not bools, a bad ``episode`` or ``start``) raise
``ValueError`` naming what is allowed.

The observation buffer is preallocated; with ``copy=True`` (default) each call returns a
fresh copy, as Gymnasium's checkers require; ``copy=False`` returns the buffer itself,
overwritten by the next step (faster for a trainer that consumes it at once).
``final_obs=False`` skips the final observations (``info["final_obs"]`` is then absent).
``obs_type="features"`` gives the float32 features the suite's own networks read
(:mod:`imperiale_env.kernels.features`) instead of the bytes, final observations included.
"""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from imperiale_env.batch import BatchGame
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.input_checks import seed as check_seed
from imperiale_env.core.observation import OBS_DTYPE, OBS_SIZE
from imperiale_env.core.one_thread import one_thread
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.envs.env_checks import (
    check_episode,
    check_obs_type,
    check_start,
    draw_game_seeds,
    encode,
    is_integer,
    observation_space_of,
    reset_start,
)

__all__ = ["ImperialeVectorEnv"]


class ImperialeVectorEnv(VectorEnv):
    """``num_envs`` self-play games of L'Impériale (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | str | dict | None = "academie",
        episode: str = "game",
        copy: bool = True,
        final_obs: bool = True,
        start: dict[str, Any] | None = None,
        obs_type: str = "bytes",
    ):
        if not is_integer(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {reprlib.repr(num_envs)}")
        for name, flag in (("copy", copy), ("final_obs", final_obs)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {reprlib.repr(flag)}")
        self.rules = resolve_rules(rules)
        self.players = self.rules.players
        self.episode = check_episode(episode)
        self.start = check_start(self.rules, start, self.episode)
        self.obs_type = check_obs_type(obs_type)
        self.num_envs = int(num_envs)
        self.copy = copy
        self.render_mode = None
        self._game = BatchGame(self.rules, self.num_envs, auto_next_game=True,
                               single_deal=self.episode == "deal", keep_final_obs=final_obs)
        self._final_obs = final_obs
        self.single_observation_space = observation_space_of(self.rules, self.obs_type)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._obs = np.zeros((self.num_envs, OBS_SIZE), dtype=OBS_DTYPE)
        self._ar = np.arange(self.num_envs)
        self._started = False

    @property
    def engine(self) -> BatchGame:
        """The batched engine (read it, do not step it)."""
        return self._game

    @property
    def game_seeds(self) -> np.ndarray:
        """The engine seeds of the games in play, ``(num_envs,)`` uint64."""
        return self._game.seed.copy()

    @one_thread
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal a new game in every slot, the game seeds drawn from :attr:`np_random`."""
        if seed is not None:
            seed = check_seed(seed, "reset seed")
        if isinstance(options, dict) and "start" in options:
            raise ValueError("the start score of ImperialeSelfPlay-v1 is given to the constructor (start=...), "
                             "since every restarted game begins from it; it is not a reset option")
        reset_start(self.rules, self.start, self.episode, options)
        super().reset(seed=seed)
        seeds = draw_game_seeds(self.np_random, self.num_envs)
        if self.start is None:
            self._game.reset(seeds)
        else:  # every deal, restarted ones too, starts from this score
            self._game.reset(seeds, imperiales=np.array(self.start["imperiales"]),
                             points=np.array(self.start["points"]), dealer=self.start["dealer"])
        self._started = True
        return self._observe(), self._infos()

    @one_thread
    def step(self, actions: Any):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers (action ids 0..42), got an array of {a.dtype} "
                            f"{reprlib.repr(a.tolist() if a.dtype != object else actions)}")
        if a.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, got shape {a.shape}")
        last_seat = self._game.current_player.copy()
        seeds = self._game.seed.copy()
        rewards_all, terminated = self._game.step(a.astype(np.int64, copy=False))
        obs = self._observe()
        infos = self._infos()
        infos["last_seat"] = last_seat
        infos["rewards_all"] = rewards_all
        if terminated.any():
            self._add_final(infos, terminated, seeds, rewards_all, last_seat)
        rewards = rewards_all[self._ar, last_seat]
        return obs, rewards, terminated, np.zeros(self.num_envs, dtype=bool), infos

    def _observe(self) -> np.ndarray:
        obs = self._game.observe(out=self._obs)
        if self.obs_type == "features":
            return encode(obs, self.obs_type)  # a new array at every call
        return obs.copy() if self.copy else obs

    def _infos(self) -> dict[str, Any]:
        return {"acting_seat": self._game.current_player.copy(),
                "action_mask": self._game.legal_action_mask().view(np.int8)}

    def _add_final(self, infos: dict[str, Any], ended: np.ndarray, seeds: np.ndarray, rewards_all: np.ndarray,
                   last_seat: np.ndarray) -> None:
        game, P = self._game, self.players
        idx = np.flatnonzero(ended)
        if self._final_obs:
            final_obs = np.full(self.num_envs, None, dtype=object)
            fo = encode(game.final_observation[idx], self.obs_type)
            for k, i in enumerate(idx):
                final_obs[i] = fo[k]
            infos["final_obs"] = final_obs
            infos["_final_obs"] = ended.copy()
        imperiales = np.zeros((self.num_envs, P), dtype=np.int64)
        points = np.zeros((self.num_envs, P), dtype=np.int64)
        imperiales[idx] = game.final_imperiales[idx]
        points[idx] = game.final_points[idx]
        reached = imperiales >= self.rules.target_imperiales
        winner = np.where(reached.any(axis=1), reached.argmax(axis=1), -1)
        winner[~ended] = 0
        final_info: dict[str, Any] = {}
        for key, value in (("winner", winner), ("imperiales", imperiales), ("points", points),
                           ("game_seed", np.where(ended, seeds, np.uint64(0))),
                           ("rewards", np.where(ended[:, None], rewards_all, np.float32(0.0))),
                           ("last_seat", np.where(ended, last_seat, 0))):
            final_info[key] = value
            final_info["_" + key] = ended.copy()
        infos["final_info"] = final_info
        infos["_final_info"] = ended.copy()

    def close_extras(self, **kwargs: Any) -> None:
        pass
