"""The batched driver loop, written once: observe, legal actions, act by seat, step.

Tournaments (:mod:`imperiale_agents.tournament.match`), self-play rollouts (:mod:`imperiale_train.rollout`)
and imitation's labels (:mod:`imperiale_train.imitate`) all play the games of one
:class:`~imperiale_env.batch.BatchGame` side by side in the same way: at each step every game's
acting seat sees its observation and legal mask, one action per game is chosen, the batch steps,
and the outcome is kept.  Who chooses for which seat and what is kept are what differ, so they are
the arguments of :func:`drive`: ``choose`` (the actions of a :class:`Turn`), ``record`` (what a
decision leaves, read before the step changes the games) and ``settle`` (the rewards and the games
that ended).  :func:`act_by` hands each actor its own games, :func:`checked_actions` refuses an
agent's answer that is not one legal integer action id per game (the one check of every agent's
answer: the tournament's, the rollout's fixed opponents', a user's agent wrapped by
:class:`~imperiale_agents.checked.CheckedAgent`).

Every callback works on whole arrays: the loops here are over steps and over actors, never over
the games of the batch.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from imperiale_agents.errors import AgentMisbehaved
from imperiale_env.batch import BatchGame
from imperiale_env.core.actions import NUM_ACTIONS, describe


@dataclass(frozen=True)
class Turn:
    """One step of the batch, as the acting seats see it (every array has one row per game)."""

    index: int  # the step's number in this drive, from 0
    obs: np.ndarray  # (N, OBS_SIZE) uint8: the acting seat's observation
    mask: np.ndarray  # (N, NUM_ACTIONS) bool: its legal actions
    seat: np.ndarray  # (N,) int64: the acting seat (a copy: the step does not change it)
    live: np.ndarray  # (N,) bool: games waiting on a decision; the engine ignores the others' actions


Choose = Callable[[Turn], np.ndarray]
Record = Callable[[Turn, np.ndarray], None]
Settle = Callable[[Turn, np.ndarray, np.ndarray], None]


def drive(bg: BatchGame, choose: Choose, *, record: Record | None = None, settle: Settle | None = None,
          steps: int | None = None, obs_out: np.ndarray | None = None) -> int:
    """Play ``bg``: each step ``choose(turn)`` gives one action per game, ``record(turn, actions)``
    sees them before the step, ``settle(turn, rewards, terminated)`` the step's outcome (as
    :meth:`BatchGame.step` returns it).  Until every game is over, or exactly ``steps`` steps (a
    batch with ``auto_next_game`` never runs dry).  ``obs_out``: a ``(steps, N, OBS_SIZE)`` buffer
    that step ``t``'s observations are written into (a rollout's storage, no copy).  Returns the
    number of steps played."""
    if obs_out is not None and (steps is None or obs_out.shape[:2] != (steps, bg.n)):
        raise ValueError(f"obs_out must hold (steps, {bg.n}) observations for a drive of a given number of steps, "
                         f"got shape {obs_out.shape} with steps={steps}")
    t = 0
    while (t < steps) if steps is not None else not bg.done.all():
        obs = bg.observe(out=None if obs_out is None else obs_out[t])
        turn = Turn(index=t, obs=obs, mask=bg.legal_action_mask(), seat=bg.current_player.copy(), live=~bg.done)
        actions = choose(turn)
        if record is not None:
            record(turn, actions)
        rewards, terminated = bg.step(actions)
        if settle is not None:
            settle(turn, rewards, terminated)
        t += 1
    return t


def act_by(who: np.ndarray, act: Callable[[int, np.ndarray], np.ndarray], actions: np.ndarray) -> np.ndarray:
    """Each actor named in ``who`` (one label per game: an actor's number, or -1 where none of
    these actors plays) chooses for its own games, actors in increasing order (the order they
    draw from shared generators): ``actions[rows] = act(label, rows)``.  Returns ``actions``,
    changed in place."""
    for label in np.unique(who[who >= 0]):
        rows = np.flatnonzero(who == label)
        actions[rows] = act(int(label), rows)
    return actions


def checked_actions(actions: Any, mask: np.ndarray, who: str, games: np.ndarray | None = None) -> np.ndarray:
    """``actions``, the answer of ``who`` (``agent 'name'``) for the games whose legal masks are the
    rows of ``mask``, as ``(B,)`` int64 if it is one legal action id a game; otherwise
    :class:`~imperiale_agents.errors.AgentMisbehaved` saying what is wrong, naming the game by its
    number in ``games`` (or its row of the batch).  A float or a bool is refused, never truncated."""
    batch = len(mask)

    def game(row: int) -> str:
        return f"game {games[row]}" if games is not None else f"game {row} of the batch"

    try:
        answer = np.asarray(actions)
    except Exception as exc:  # an object numpy cannot read
        raise AgentMisbehaved(f"{who} returned {reprlib.repr(actions)}, not an array of action ids ({exc})") from None
    if answer.shape != (batch,):
        shown = reprlib.repr(answer.tolist() if answer.dtype != object else actions)
        raise AgentMisbehaved(f"{who} returned {shown} of shape {answer.shape}; act must return one action id per "
                              f"game, shape ({batch},)")
    if answer.dtype.kind not in "iu":
        raise AgentMisbehaved(f"{who} returned {answer.dtype} actions {reprlib.repr(answer.tolist())}; action ids are "
                              f"integers 0..{NUM_ACTIONS - 1} (an integer array: a float or a bool is not read as one)")
    for row in np.flatnonzero((answer < 0) | (answer >= NUM_ACTIONS)):
        raise AgentMisbehaved(f"{who} returned action {int(answer[row])} in {game(row)}; action ids are "
                              f"0..{NUM_ACTIONS - 1}")
    answer = answer.astype(np.int64, copy=False)
    for row in np.flatnonzero(~mask[np.arange(batch), answer]):
        legal = ", ".join(f"{a} ({describe(int(a))})" for a in np.flatnonzero(mask[row]))
        raise AgentMisbehaved(f"{who} chose action {answer[row]} ({describe(int(answer[row]))}) in {game(row)}, "
                              f"which is illegal there; legal: {legal}")
    return answer
