"""The one interface every agent implements, and the registry that builds agents from a spec string.

An agent is **batched**: :meth:`Agent.act` receives the observations and legal-action masks of
``B`` games at once (the acting player of each, as :meth:`imperiale_env.batch.BatchGame.observe`
and :meth:`~imperiale_env.batch.BatchGame.legal_action_mask` give them) and returns one action
id per game.  A slow agent loops inside; a fast one vectorises over the batch.  An agent sees
nothing but the observation, the mask and the random generator it is handed: the tournament
never gives it the hidden cards.

Agents are built from spec strings (``heuristic``, ``pimc:16``, ``champion``, your own
``module:Class``...) by :func:`make_agent`, which reads the one table of kinds in
:mod:`imperiale_agents.registry`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from imperiale_agents.registry import (  # noqa: F401  (the names users import from here)
    AGENT_FORMS,
    AGENT_KINDS,
    MAX_SAMPLES,
    MAX_WORKERS,
    AgentError,
    check_workers,
    make_agent,
)


@runtime_checkable
class Agent(Protocol):
    """A player of L'Impériale.

    ``act(obs, mask, rng)``: ``obs`` is ``(B, OBS_SIZE)`` uint8 (observation version 1), ``mask`` ``(B, 43)`` bool with
    at least one legal action per row; returns ``(B,)`` int64 legal action ids.
    """

    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


def reset_agent(agent: Agent) -> None:
    """Call the agent's optional ``reset()`` (before a new match)."""
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset()
