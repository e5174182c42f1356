"""
# L'Impériale

A two- or three-player trick-taking card game of the 17th century, an ancestor of Piquet, as a
PettingZoo classic environment (AEC API) over the batched engine: a
:class:`~imperiale_env.batch.BatchGame` of one game (:mod:`imperiale_env.envs.single_game`), one
compiled call a step and one for each observation, as fast for one game as the reference engine
:class:`~imperiale_env.reference.game.Game`, which stays the oracle the tests compare it with.

| Import             | `from imperiale_env.envs.aec import env`; `pettingzoo.make("aec", "imperiale/imperiale_v1")` |
|--------------------|-----------------------------------------------------------------------------------------|
| Actions            | Discrete                                                                                |
| Parallel API       | No                                                                                      |
| Manual Control     | No                                                                                      |
| Agents             | `agents= ['player_0', 'player_1']` (and `'player_2'` with three players)                |
| Agents             | 2 or 3 (by the rules preset)                                                            |
| Action Shape       | Discrete(43)                                                                            |
| Action Values      | [0, 42]                                                                                 |
| Observation Shape  | `{'observation': (OBS_SIZE,), 'action_mask': (43,)}`, uint8 (the size: docs/observation.md) |
| Observation Values | each entry in its block's range (`imperiale_env.core.observation.bounds(rules)`)       |
| Action Mask        | `observation['action_mask']`, (43,) int8 of 0/1                                         |

Each agent is a seat: `player_k` is seat `k`.  The dealer of the first deal is drawn from
the seed and passes to the next seat after each deal; the agent to act is always the one
whose decision the rules call for (the elder's in-hand questions, then the dealer's, the
point, the tricks), so the order of agents is not a fixed cycle.

Arguments of `env(...)` / `raw_env(...)`:

* `rules`: a preset name (`"academie"` (default), `"academie3"`, `"foster"`, `"imperijal"`),
  a :class:`~imperiale_env.core.rules.Rules` or a dict as in game records.
* `episode`: `"game"` (default), played deal after deal to the target number of impériales,
  or `"deal"`, one deal.
* `start`: for `episode="deal"` only, the score the deal starts from:
  `dict(imperiales=[..], points=[..], dealer=k)` (each key optional: 0, 0, the seeded dealer).
  `reset(options={"start": {...}})` overrides it for one episode; any other option key is
  warned about and ignored.  `reset(seed=...)` takes an integer in `[0, 2**63)`.
* `obs_type`: `"bytes"` (default), the observation below, or `"features"`: the float32 features
  the suite's own networks read (`Box(0, 1, (FEATURE_SIZE,), float32)`,
  :mod:`imperiale_env.kernels.features`), for a library whose default network reads the
  observation as floats (RLlib's, TorchRL's...).
* `render_mode`: `None`, `"ansi"` (`render()` returns the table as a string), `"rgb_array"`
  (the acting seat's view drawn with cards, `(400, 960, 3)` uint8, :mod:`imperiale_env.envs.render_image`) or `"human"`
  (prints it after every step and on `render()`).

`env()` wraps `raw_env` in `TerminateIllegalWrapper(illegal_reward=-1)`,
`AssertOutOfBoundsWrapper` and `OrderEnforcingWrapper`, as the PettingZoo classic games do.
Any option outside these values raises a `ValueError` (a bad `rules` a `RulesError`) naming it
and what is allowed.

### Observation Space

The observation is a dictionary with an `'observation'` element, the uint8 vector of
observation version 1 (:mod:`imperiale_env.core.observation`, the table in
`docs/observation.md`): the hand; for every card played this deal who played it and in which
trick, and who led each trick (the order of play, exactly); the cards shown and by whom; the
turned card and trump; the cards and suits the play proves each other seat lacks; the
decision pending (phase, question); the items shown and the points declared; scores, tricks,
dealer.  Seats are relative to the observing agent, so one network serves every seat.  Every
entry is a small integer (a flag, a count or "1 + a category", 0 for none) within the exact
bounds of the space; a network one-hot encodes the categories
(:data:`~imperiale_env.core.observation.FEATURES`).  Every agent gets its own real view of the
table at any time (the batched encoder, checked equal to the reference
:func:`~imperiale_env.reference.observe.observe` for every seat at every decision by
``tests/test_env_engine.py``): an agent who is not to act sees no pending decision (phase and
question blocks zero).  The impériales are capped at the target and the points at 24: only the final state
of a game reaches a cap.

#### Legal Actions Mask

`action_mask` is an int8 vector of 43 zeros and ones: the legal actions of the agent to act.
It is all zeros for every other agent and once the game is over.  Taking an illegal action
(with `env()`) ends the game: the offending agent gets -1, the others 0.

### Action Space

One layout of 43 ids for every preset (:mod:`imperiale_env.core.actions`): 0..35 play the card
with that index (`suit * 9 + rank`, suits S H D C, ranks K Q J A 10 9 8 7 6; two-player games
never use the sixes), 36 `show` and 37 `hide` answer the pending declaration question (carte
blanche, an impériale in hand, the turned-card impériale), 38..41 declare the point in S H D
C, 42 sinks the point.

An action is a Python `int` or a numpy integer in 0..42; the agent whose game has ended steps
with `None`.  Anything else is refused before the wrappers' checks, with an error naming the
action, the allowed ids and the legal actions now: `TypeError` for a bool, a float (even
`38.0`), a string or `None` from an agent still playing; `ValueError` for an integer outside
0..42 or an action from an agent whose game has ended.  An id in 0..42 that is illegal now ends
the game with -1 under `env()` (`TerminateIllegalWrapper`); `raw_env` raises `ValueError`.

### Rewards

Rewards are given when the game ends, zero-sum:

| Winner | Others          |
| :----: | :-------------: |
| +1     | -1 / (players - 1) |

With `episode="deal"`, a deal that ends without a winner gives each player the change of his
score in impériales over the deal (points count 1/24) minus the mean change of the others.
Nothing is rewarded before the end; `last()` returns the reward accumulated since the agent
last acted.  The game seed the engine used is `env.unwrapped.game_seed`: replaying the same
actions in :class:`imperiale_env.reference.game.Game` with that seed gives the same game, which
is what `env.unwrapped.engine` does (rebuilt on demand, for rendering and for reading the hands,
tricks and events; the plain loop never builds it).

### Version History

* v0: Initial release (imperiale 0.1.0).
"""

from __future__ import annotations

import reprlib
import time
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from imperiale_env.core.actions import NUM_ACTIONS, describe
from imperiale_env.core.input_checks import seed as check_seed
from imperiale_env.core.one_thread import one_thread
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.envs.env_checks import (
    check_action,
    check_episode,
    check_obs_type,
    check_render_mode,
    check_start,
    draw_game_seeds,
    encode,
    observation_space_of,
    reset_start,
)
from imperiale_env.envs.render_text import present, table_text
from imperiale_env.envs.single_game import SingleGame
from imperiale_env.reference.game import Game

__all__ = ["aec_decisions_per_second", "env", "raw_env"]


def env(**kwargs: Any) -> AECEnv:
    """:class:`raw_env` with the wrappers of the PettingZoo classic games."""
    e: AECEnv = raw_env(**kwargs)
    e = _IllegalEnds(e, illegal_reward=-1)
    e = _CheckedAction(e)
    e = _InOrder(e)
    return e


class _InOrder(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order check, with an error that says what to do (a ``RuntimeError`` naming
    the call and ``reset(seed=...)``) instead of the bare ``AssertionError`` its logger raises
    when the game is used before it is dealt."""

    def _dealt(self, call: str) -> None:
        if not self._has_reset:
            raise RuntimeError(f"imperiale_v1: call reset(seed=...) before {call}: no game has been dealt yet")

    def step(self, action: Any) -> None:
        self._dealt("step()")
        super().step(action)

    def observe(self, agent: str) -> Any:
        self._dealt("observe()")
        return super().observe(agent)

    def last(self, observe: bool = True) -> Any:
        self._dealt("last()")
        return super().last(observe)

    def render(self) -> Any:
        self._dealt("render()")
        return super().render()

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        self._dealt("agent_iter()")
        return super().agent_iter(max_iter)


class _IllegalEnds(wrappers.TerminateIllegalWrapper):
    """PettingZoo's illegal-move rule, judged on a copy of the mask it handed out: its own wrapper
    keeps the very array the caller got, so a caller that wrote into it (zeroed it, masked an
    action of its own) would make a legal move count as illegal and lose the game."""

    def observe(self, agent: str) -> Any:
        obs = super().observe(agent)
        if self._prev_obs is obs and isinstance(obs, dict):
            self._prev_obs = {**obs, "action_mask": obs["action_mask"].copy()}
        return obs


class _CheckedAction(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's bounds check, preceded by :meth:`raw_env.checked_action`, so that a bad
    action gets an error naming it, the allowed ids and the legal actions rather than a bare
    ``AssertionError``; a numpy integer passes on as the Python int it holds."""

    def step(self, action: Any) -> None:
        super().step(self.unwrapped.checked_action(action))


class raw_env(AECEnv, EzPickle):  # noqa: N801 (PettingZoo naming)
    """L'Impériale as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"name": "imperiale_v1", "render_modes": ["ansi", "human", "rgb_array"], "is_parallelizable": False,
                "render_fps": 1}

    def __init__(
        self,
        rules: Rules | str | dict | None = "academie",
        episode: str = "game",
        start: dict[str, Any] | None = None,
        render_mode: str | None = None,
        obs_type: str = "bytes",
    ):
        EzPickle.__init__(self, rules=rules, episode=episode, start=start, render_mode=render_mode,
                          obs_type=obs_type)
        super().__init__()
        self.rules = resolve_rules(rules)
        self.episode = check_episode(episode)
        self.start = check_start(self.rules, start, self.episode)
        self.render_mode = check_render_mode(render_mode)
        self.obs_type = check_obs_type(obs_type)
        P = self.rules.players
        self._game = SingleGame(self.rules, self.episode)
        self.possible_agents = [f"player_{p}" for p in range(P)]
        self._seat = {agent: p for p, agent in enumerate(self.possible_agents)}
        self.observation_spaces = {
            a: spaces.Dict({"observation": observation_space_of(self.rules, self.obs_type),
                            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8)})
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.agents: list[str] = []
        self.rewards = {}
        self._cumulative_rewards = {}
        self.terminations = {}
        self.truncations = {}
        self.infos = {}
        self.agent_selection = self.possible_agents[0]
        self._np_random: np.random.Generator | None = None
        self._np_random_seed: int | None = None
        self.game_seed: int | None = None
        self._closed = False

    # ------------------------------------------------------------------ spaces

    def __getstate__(self) -> dict[str, Any]:
        """The whole env, its game in progress included (EzPickle would rebuild a fresh, undealt
        env while the wrappers around it remember a reset)."""
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ the game

    @property
    def engine(self) -> Game | None:
        """The reference game being played, rebuilt from the seed and the actions on demand (read
        it, do not step it); ``None`` before the first reset."""
        return self._game.game

    @property
    def winner(self) -> int | None:
        return self._game.winner

    @property
    def imperiales(self) -> list[int]:
        return list(self._game.imperiales)

    @property
    def points(self) -> list[int]:
        return list(self._game.points)

    @one_thread
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            seed = check_seed(seed, "reset seed")
        start = reset_start(self.rules, self.start, self.episode, options)
        if seed is not None or self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        self.game_seed = draw_game_seeds(self._np_random)
        self._game.reset(self.game_seed, start)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        if self._game.over:  # the game ended before its first decision (a turned honour at 4 impériales)
            self._end(self._game.end_rewards())
            self.agent_selection = self.agents[0]
        else:
            self.agent_selection = self.possible_agents[self._game.current_player]

    def _end(self, rewards: np.ndarray) -> None:
        for agent in self.agents:
            self.rewards[agent] = float(rewards[self._seat[agent]])
        self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()

    def checked_action(self, action: Any) -> int | None:
        """``action`` of the agent to act as an int (``None`` for an agent whose game has ended),
        or an error naming it, what is allowed and the legal actions (see the module docstring)."""
        agent = self.agent_selection
        if agent not in self.terminations:
            raise RuntimeError("no agent is to act: call reset() (before the first game, and once every agent "
                               "has stepped out of a finished one)")
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ValueError(f"{agent}: the game is over for this agent: step(None), not "
                                 f"step({reprlib.repr(action)})")
            return None
        return check_action(action, self._game.legal_mask, agent)

    @one_thread
    def step(self, action: Any) -> None:
        action = self.checked_action(action)
        agent = self.agent_selection
        if action is None:
            self._was_dead_step(action)
            return
        seat = self._seat[agent]
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if not self._game.is_legal(action):
            legal = ", ".join(f"{a} {describe(a)}" for a in np.flatnonzero(self._game.legal_mask()))
            raise ValueError(f"{agent}: illegal action {action} ({describe(action)}) now (legal: {legal})")
        self._game.step(action)
        if self._game.over:
            self._end(self._game.end_rewards())
            self.agent_selection = self.possible_agents[(seat + 1) % len(self.possible_agents)]
        else:
            self.agent_selection = self.possible_agents[self._game.current_player]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        obs = self._game.observe(seat)
        if self._game.current_player == seat and agent == self.agent_selection:
            mask = self._game.legal_mask().view(np.int8)
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": encode(obs, self.obs_type), "action_mask": mask}

    # ------------------------------------------------------------------ rendering

    def render(self) -> str | np.ndarray | None:
        return present(self.render_mode, self._table, self._image)

    def _table(self) -> str:
        game = self._game.game
        if game is None:
            return "L'Impériale: no game yet (call reset)"
        return table_text(game, game.current_player, self.possible_agents, tell_events=True)

    def _image(self) -> np.ndarray:
        """The acting seat's view, as :meth:`_table` writes it, drawn with cards."""
        from imperiale_env.envs.render_image import table_image

        game = self._game.game
        return table_image(game, None if game is None else game.current_player, self.possible_agents)

    def close(self) -> None:
        self._closed = True


def aec_decisions_per_second(rules: Rules | str | dict | None = "academie", seconds: float = 1.0,
                             seed: int = 0) -> float:
    """Decisions per second of random legal games played through :func:`env` (the wrapped AEC
    environment, one game at a time), for comparison with the batched engine."""
    e = env(rules=rules)
    rng = np.random.default_rng(seed)
    e.reset(seed=seed)
    decisions = 0
    begin = time.perf_counter()
    deadline = begin + seconds
    while True:
        for _agent in e.agent_iter():
            obs, _, terminated, truncated, _ = e.last()
            if terminated or truncated:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
            decisions += 1
            if decisions % 64 == 0 and time.perf_counter() >= deadline:
                break
        if time.perf_counter() >= deadline:
            break
        e.reset()
    elapsed = time.perf_counter() - begin
    e.close()
    return decisions / elapsed
