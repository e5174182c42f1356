"""The one interface every agent implements, and the registry that builds agents from a spec string.

An agent is **batched**: :meth:`Agent.act` receives the observations and legal-action masks of
``B`` games at once (the acting player of each, as :meth:`imperiale_env.batch.BatchGame.observe`
and :meth:`~imperiale_env.batch.BatchGame.legal_action_mask` give them) and returns one action
id per game.  A slow agent loops inside; a fast one vectorises over the batch.  An agent sees
nothing but the observation, the mask and the random generator it is handed: the tournament
never gives it the hidden cards.

Specs understood by :func:`make_agent`:

============  ==============================================================
``random``    uniform over the legal actions
``heuristic`` the rule-based player of :mod:`agents.heuristic`
``pimc``      Perfect Information Monte Carlo (:mod:`agents.pimc`), 16 samples
``pimc:N``    the same with ``N`` sampled deals per decision
``pimc:N:K``  ``N`` samples, searching only the last ``K`` tricks of a deal (heuristic before)
``neural:P``  a trained policy loaded from checkpoint ``P`` (needs torch and ``train``)
``human``     a person at the terminal (:mod:`agents.human`)
============  ==============================================================
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from imperiale_env.rules import Rules, resolve_rules


@runtime_checkable
class Agent(Protocol):
    """A player of L'Impériale.

    ``act(obs, mask, rng)``: ``obs`` is ``(B, OBS_SIZE)`` float32, ``mask`` ``(B, 43)`` bool with
    at least one legal action per row; returns ``(B,)`` int64 legal action ids.
    """

    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


class AgentError(ValueError):
    """An agent spec that cannot be built; the message says what is allowed."""


AGENT_KINDS = ("random", "heuristic", "pimc", "neural", "human")


def reset_agent(agent: Agent) -> None:
    """Call the agent's optional ``reset()`` (before a new match)."""
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset()


def make_agent(spec: str, rules: Rules | str | dict | None = None, *, workers: int = 1) -> Agent:
    """Build the agent named by ``spec`` (see the module docstring) for ``rules``; ``workers``
    processes for the agents that can spread a batch (pimc)."""
    rules = resolve_rules(rules)
    if not isinstance(spec, str) or not spec.strip():
        raise AgentError(f"an agent spec must be a non-empty string (allowed: {', '.join(AGENT_KINDS)})")
    kind, _, arg = spec.strip().partition(":")
    if kind == "random":
        from .random_agent import RandomAgent

        return RandomAgent()
    if kind == "heuristic":
        from .heuristic import HeuristicAgent

        return HeuristicAgent(rules)
    if kind == "pimc":
        from .pimc import DEFAULT_SAMPLES, PIMCAgent

        samples, horizon = DEFAULT_SAMPLES, 12
        if arg:
            parts = arg.split(":")
            try:
                samples = int(parts[0])
                horizon = int(parts[1]) if len(parts) > 1 else 12
            except ValueError:
                raise AgentError(f"pimc:N[:K] needs integers (samples, tricks searched), got {spec!r}") from None
            if samples < 1 or not 1 <= horizon <= 12 or len(parts) > 2:
                raise AgentError(f"pimc:N[:K] needs N >= 1 samples and 1 <= K <= 12 tricks, got {spec!r}")
        return PIMCAgent(rules, samples=samples, workers=workers, horizon=horizon)
    if kind == "human":
        from .human import HumanAgent

        return HumanAgent()
    if kind == "neural":
        if not arg:
            raise AgentError("neural:PATH needs the path of a checkpoint, e.g. neural:runs/latest.pt")
        return _make_neural(arg, rules, spec)
    raise AgentError(f"unknown agent {spec!r} (allowed: random, heuristic, pimc, pimc:N, pimc:N:K, neural:PATH, human)")


def _make_neural(path: str, rules: Rules, spec: str) -> Agent:
    """Lazy import of the training code: a clear error when the checkpoint, torch or the loader is missing."""
    from pathlib import Path

    if not Path(path).exists():
        raise AgentError(f"{spec}: no such checkpoint: {path}")
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        raise AgentError(f"{spec}: the neural agent needs torch (pip install -e '.[train]')") from None
    from train.checkpoint import CheckpointError

    from .neural import NeuralAgent

    try:
        return NeuralAgent(path, rules=rules)
    except CheckpointError as exc:
        raise AgentError(f"neural:{path}: {exc}") from None
