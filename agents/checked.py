"""A user's own agent (``module:Class``, ``path/to/file.py:Class``) with every answer checked.

The suite's agents are tested; a user's is not, and whatever it does wrong would surface deep in
the tournament, the terminal game, the env or the web table as a numpy traceback, a silently
truncated float, or an exit without a word.  :class:`CheckedAgent` stands between: an exception
or ``sys.exit`` in its code, and an answer that is not one legal integer action id per game, each
become one :class:`~imperiale_agents.errors.AgentMisbehaved` naming the agent, the game of the
batch, what it answered and what was allowed (the answer checked by the driver's
:func:`~imperiale_agents.driver.checked_actions`, as every agent's is).  Everything else
(``name``, ``reset``, attributes of its own) is the agent's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from imperiale_agents.driver import checked_actions
from imperiale_agents.errors import AgentMisbehaved


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
