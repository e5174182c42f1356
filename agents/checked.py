"""A user's own agent (``module:Class``, ``path/to/file.py:Class``) with every answer checked.

The suite's agents are tested; a user's is not, and whatever it does wrong would surface deep in
the tournament, the terminal game, the env or the web table as a numpy traceback, a silently
truncated float, or an exit without a word.  :class:`CheckedAgent` stands between: an exception
or ``sys.exit`` in its code, and an answer that is not one legal integer action id per game, each
become one :class:`AgentMisbehaved` (an :class:`~imperiale_agents.errors.AgentError`) naming the agent, the game of the
batch, what it answered and what was allowed.  Everything else (``name``, ``reset``, attributes
of its own) is the agent's.
"""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np

from imperiale_agents.errors import AgentError
from imperiale_env.core.actions import NUM_ACTIONS, describe


class AgentMisbehaved(AgentError):
    """What a user's agent did wrong while playing (the message names the agent and the game)."""


def checked_actions(actions: Any, mask: np.ndarray, who: str) -> np.ndarray:
    """``actions`` as ``(B,)`` int64 if they are one legal action id per row of ``mask``;
    :class:`AgentMisbehaved` saying what is wrong otherwise (a float is refused, never truncated)."""
    batch = len(mask)
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
        raise AgentMisbehaved(f"{who} returned action {int(answer[row])} in game {row} of the batch; action ids are "
                              f"0..{NUM_ACTIONS - 1}")
    answer = answer.astype(np.int64, copy=False)
    for row in np.flatnonzero(~mask[np.arange(batch), answer]):
        legal = ", ".join(f"{a} ({describe(int(a))})" for a in np.flatnonzero(mask[row]))
        raise AgentMisbehaved(f"{who} chose action {answer[row]} ({describe(int(answer[row]))}) in game {row} of the "
                              f"batch, which is illegal there; legal: {legal}")
    return answer


class CheckedAgent:
    """``agent`` (built from ``spec``) whose ``act`` is checked (see the module docstring)."""

    def __init__(self, agent: Any, spec: str):
        self._agent = agent
        self.spec = spec

    @property
    def name(self) -> str:
        return self._agent.name

    @name.setter
    def name(self, value: str) -> None:
        self._agent.name = value

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr == "_agent":  # not yet set while unpickling
            raise AttributeError(attr)
        return getattr(self._agent, attr)

    def act(self, obs: np.ndarray, mask: np.ndarray, *rng: np.random.Generator) -> np.ndarray:
        """The agent's actions, checked; called as the agent itself is (with or without ``rng``)."""
        who = f"agent {self.name!r} ({self.spec})"
        try:
            actions = self._agent.act(obs, mask, *rng)
        except (Exception, SystemExit) as exc:  # Ctrl-C is the person's, not the agent's: it passes
            what = f"exited (sys.exit({exc.code!r}))" if isinstance(exc, SystemExit) else \
                f"raised {type(exc).__name__}: {exc}"
            raise AgentMisbehaved(f"{who} {what} while choosing actions for {len(mask)} games") from exc
        return checked_actions(actions, mask, who)
