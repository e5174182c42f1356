"""L'Impériale as a single-agent Gymnasium environment: one seat against a fixed opponent.

Registered as ``Imperiale-v1`` when :mod:`imperiale_env` is imported::

    import gymnasium, imperiale_env
    env = gymnasium.make("Imperiale-v1", rules="foster", opponent=my_policy)

=================  ==================================================================
Observation        ``Box(low, high, (OBS_SIZE,), uint8)``: the agent's view, observation
                   version 1 (the layout of :mod:`imperiale_env.core.observation`, seats
                   relative to the agent; ``low, high = bounds(rules)``); with
                   ``obs_type="features"``, ``Box(0, 1, (FEATURE_SIZE,), float32)``: the
                   features of that view (:mod:`imperiale_env.kernels.features`)
Action             ``Discrete(43)`` (:mod:`imperiale_env.core.actions`)
Action mask        ``info["action_mask"]`` (43,) int8 and :meth:`ImperialeEnv.action_masks`
                   (43,) bool, for sb3-contrib's MaskablePPO; all zeros once the episode ended
Reward             at the end only: the engine's zero-sum reward of the agent's seat, +1 for
                   a win and -1/(players-1) for a loss (``episode="deal"``: the change of the
                   score over the deal, :func:`~imperiale_env.envs.env_checks.end_rewards`)
Illegal action     an id in 0..42 that is illegal now ends the episode at once with
                   reward -1 (``info["illegal_action"]``); what is not an action id
                   raises, naming it, the allowed ids and the legal actions, and
                   changes nothing: ``TypeError`` for a bool, a float (even ``38.0``),
                   a string or ``None``, ``ValueError`` for an integer outside 0..42
                   (no policy sampling the action space produces either)
=================  ==================================================================

An action is a Python ``int`` or a numpy integer.

Arguments:

* ``rules``: a preset name, :class:`~imperiale_env.core.rules.Rules` or dict (default ``academie``).
* ``seat``: the agent's seat, ``0`` (default) .. ``players-1``, or ``"random"``: drawn from
  :attr:`np_random` at each reset.  The seat of the episode is ``info["seat"]`` and
  :attr:`ImperialeEnv.agent_seat`.
* ``opponent``: plays every other seat.  An agent spec string (``"heuristic"``, ``"pimc:16"``,
  ``"champion"``: any spec ``imperiale eval`` takes, built for the env's rules by the installed
  agents package, found through the ``imperiale.agent_specs`` entry point so that the envs never
  import the package built on them), a callable ``(obs (OBS_SIZE,) uint8, mask (43,) bool) ->
  int``, or an object with a batched ``act(obs (B, OBS_SIZE), mask (B, 43))`` (or ``act(obs,
  mask, rng)``, the :mod:`imperiale_agents` interface; ``rng`` is the env's :attr:`np_random`)
  returning ``(B,)`` action ids; ``None`` (default): uniform over the legal actions, drawn from
  :attr:`np_random`.  The opponent sees its own observation (the acting player's).  An illegal
  opponent action raises ``IllegalBotMove``, a ``ValueError`` (a bug of the opponent, not the
  agent's doing; :func:`~imperiale_env.envs.seating.play_until` checks it).
* ``episode``: ``"game"`` (default) or ``"deal"``; ``start``: for ``"deal"``, the score it
  starts from, ``dict(imperiales=[..], points=[..], dealer=k)``; ``reset(options={"start":
  ...})`` overrides it for one episode.
* ``obs_type``: ``"bytes"`` (default) or ``"features"``, the float input of the suite's own
  networks, for a library whose default network reads the observation as floats.  The opponent
  always gets the bytes.
* ``render_mode``: ``None``, ``"ansi"`` (a string), ``"rgb_array"`` (the table drawn with cards,
  ``(400, 960, 3)`` uint8, :mod:`imperiale_env.envs.render_image`) or ``"human"`` (printed).

A bad argument raises ``ValueError`` (``TypeError`` for the opponent, ``RulesError`` for the
rules) naming it and what is allowed.  ``reset(seed=...)`` takes an integer in ``[0, 2**63)``;
``reset(options=...)`` knows ``start`` only and ignores any other key with a warning.

``reset`` calls ``super().reset(seed=seed)`` and deals from :attr:`np_random`; the engine
game seed is :attr:`ImperialeEnv.game_seed` (and ``info["game_seed"]``, in ``[0, 2**63)`` so
that Gymnasium's vector envs can gather it as an int64): the reference
:class:`~imperiale_env.reference.game.Game` with that seed, given the same actions of every seat,
plays the same game.  The env plays on the batched engine, a
:class:`~imperiale_env.batch.BatchGame` of one game (:mod:`imperiale_env.envs.single_game`);
:attr:`ImperialeEnv.engine` is that reference game, rebuilt from the actions on demand (for
rendering and for reading hands and tricks; the plain loop never builds it).  The opponent
moves inside ``reset`` and ``step`` until the agent must decide.  A game that ends before the
agent's first decision (practically never: only a start score one award from the target, or
the opponent's carte blanche in a one-deal episode) is dropped and a new one dealt.
Observations and infos are fresh arrays on every call.
"""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.input_checks import seed as check_seed
from imperiale_env.core.one_thread import one_thread
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.envs.env_checks import (
    agent_from_spec,
    check_action,
    check_episode,
    check_obs_type,
    check_render_mode,
    check_start,
    draw_game_seeds,
    encode,
    is_integer,
    observation_space_of,
    reset_start,
)
from imperiale_env.envs.render_text import present, table_text
from imperiale_env.envs.seating import agent_choice, play_until
from imperiale_env.envs.single_game import SingleGame
from imperiale_env.reference.game import Game

__all__ = ["ImperialeEnv"]

Opponent = Callable[[np.ndarray, np.ndarray], int] | Any


class ImperialeEnv(gymnasium.Env):
    """One seat of L'Impériale against a fixed opponent (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        rules: Rules | str | dict | None = "academie",
        seat: int | str = 0,
        opponent: Opponent | None = None,
        episode: str = "game",
        start: dict[str, Any] | None = None,
        render_mode: str | None = None,
        obs_type: str = "bytes",
    ):
        self.rules = resolve_rules(rules)
        self.players = P = self.rules.players
        is_random = isinstance(seat, str) and seat == "random"
        if not is_random and (not is_integer(seat) or not 0 <= int(seat) < P):
            raise ValueError(f"seat must be 0..{P - 1} or 'random', got {reprlib.repr(seat)}")
        self._seat_choice = "random" if is_random else int(seat)
        self.episode = check_episode(episode)
        self.start = check_start(self.rules, start, self.episode)
        self.render_mode = check_render_mode(render_mode)
        self.obs_type = check_obs_type(obs_type)
        self.observation_space = observation_space_of(self.rules, self.obs_type)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._opponent = self._adapt_opponent(opponent)
        self._game = SingleGame(self.rules, self.episode)
        self.agent_seat: int | None = None
        self.game_seed: int | None = None
        self._over = True
        self._illegal = False

    # ------------------------------------------------------------------ the opponent

    def _adapt_opponent(self, opponent: Opponent | None) -> Opponent | None:
        """Check ``opponent`` and note how it is called (held as given, so that a copy or a pickle
        of the env carries its own opponent and draws from its own generator)."""
        if isinstance(opponent, str):
            opponent = agent_from_spec(opponent, self.rules)
        self._opponent_kind = "uniform" if opponent is None else "callable"
        act = getattr(opponent, "act", None)
        if callable(act):
            try:
                params = [p for p in inspect.signature(act).parameters.values()
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
                self._opponent_kind = "act_rng" if len(params) >= 3 else "act"
            except (TypeError, ValueError):
                self._opponent_kind = "act"
        elif opponent is not None and not callable(opponent):
            raise TypeError("opponent must be None, a callable (obs, mask) -> action, or an object with a batched "
                            f".act(obs, mask[, rng]); got {opponent!r}")
        return opponent

    def _opponent_action(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> Any:
        """The opponent's answer at ``seat`` (checked by :func:`play_until`)."""
        if self._opponent_kind == "uniform":
            legal = np.flatnonzero(mask)
            return int(legal[self.np_random.integers(len(legal))])
        if self._opponent_kind == "callable":
            return self._opponent(obs, mask)
        extra = (self.np_random,) if self._opponent_kind == "act_rng" else ()
        return agent_choice(self._opponent.act, *extra, bot="the opponent")(seat, obs, mask)

    def _play_opponents(self) -> tuple[float, bool]:
        """Let the opponent play until the agent must decide or the game ends; returns the
        agent's reward meanwhile (the end reward, if the game ended) and whether the game ended."""
        play_until(self._game, (self.agent_seat,), self._opponent_action, bot="the opponent")
        return self._end_reward()

    def _end_reward(self) -> tuple[float, bool]:
        """The agent's reward now (nothing before the end) and whether the game ended."""
        if not self._game.over:
            return 0.0, False
        return float(self._game.end_rewards()[self.agent_seat]), True

    # ------------------------------------------------------------------ the Gymnasium API

    @one_thread
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            seed = check_seed(seed, "reset seed")
        start = reset_start(self.rules, self.start, self.episode, options)
        super().reset(seed=seed)
        for _ in range(1000):
            self.agent_seat = (int(self.np_random.integers(self.players)) if self._seat_choice == "random"
                               else self._seat_choice)
            self.game_seed = draw_game_seeds(self.np_random)
            self._game.reset(self.game_seed, start)
            _, ended = self._play_opponents()
            if not ended:
                break
        else:
            raise RuntimeError("a thousand games in a row ended before the agent's first decision")
        self._over = False
        self._illegal = False
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    @one_thread
    def step(self, action: Any):
        if self._over:
            raise RuntimeError("the episode is over: call reset() before step()")
        a = check_action(action, self._game.legal_mask, f"the agent (seat {self.agent_seat})")
        if not self._game.is_legal(a):
            self._over = True
            self._illegal = True
            return self._observation(), -1.0, True, False, self._info()
        self._game.step(a)
        reward, ended = self._play_opponents()
        self._over = ended
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, ended, False, self._info()

    def _observation(self) -> np.ndarray:
        return encode(self._game.observe(self.agent_seat), self.obs_type)

    def action_masks(self) -> np.ndarray:
        """The legal actions now, (43,) bool (all False once the episode is over)."""
        if self._over:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self._game.legal_mask()

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self.action_masks().astype(np.int8), "seat": int(self.agent_seat),
                                "game_seed": int(self.game_seed)}
        if self._over:
            info["illegal_action"] = self._illegal
            info["winner"] = -1 if self._game.winner is None else self._game.winner
            info["imperiales"] = np.array(self._game.imperiales, dtype=np.int64)
            info["points"] = np.array(self._game.points, dtype=np.int64)
        return info

    @property
    def engine(self) -> Game | None:
        """The reference game being played, rebuilt from the seed and the actions on demand (read
        it, do not step it); ``None`` before the first reset."""
        return self._game.game

    # ------------------------------------------------------------------ rendering

    def render(self) -> str | np.ndarray | None:
        return present(self.render_mode, self._table, self._image)

    def _names(self) -> list[str]:
        return [f"player_{p}" + (" (you)" if p == self.agent_seat else "") for p in range(self.players)]

    def _table(self) -> str:
        game = self._game.game
        if game is None:
            return "L'Impériale: no game yet (call reset)"
        text = table_text(game, self.agent_seat, self._names(), tell_events=True)
        if self._illegal:
            text += "\nOver:    an illegal action ended the episode"
        return text

    def _image(self) -> np.ndarray:
        """The agent's seat's view, as :meth:`_table` writes it, drawn with cards."""
        from imperiale_env.envs.render_image import table_image

        return table_image(self._game.game, self.agent_seat, self._names(),
                           note="an illegal action ended the episode" if self._illegal else None)

    def close(self) -> None:
        pass
