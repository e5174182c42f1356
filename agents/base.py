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
``heuristic`` the rule-based player of :mod:`imperiale_agents.heuristic`
``pimc``      Perfect Information Monte Carlo (:mod:`imperiale_agents.pimc`), 16 samples
``pimc:N``    the same with ``N`` sampled deals per decision
``pimc:N:K``  ``N`` samples, searching only the last ``K`` tricks of a deal (heuristic before)
``...:search``  ``pimc:N:search``, ``pimc:N:K:search``: the declarations (questions, point) decided
              by sampled worlds too (:mod:`imperiale_agents.declaration_search`), not by the heuristic
``...:infer``   ``pimc:N:infer`` (after ``:search`` if both): sampled worlds weighed by how likely
              the shipped champion finds the opponent's plays (:mod:`imperiale_agents.inference`; two
              players, needs torch)
``neural:P``  a trained policy: an exported policy ``P`` (.npz) or a training checkpoint (needs torch)
``champion``  the policy shipped for the rules played (:mod:`imperiale_agents.champions`; needs torch)
``human``     a person at the terminal (:mod:`imperiale_agents.human`)
============  ==============================================================
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from imperiale_env.core.rules import Rules, resolve_rules


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


AGENT_KINDS = ("random", "heuristic", "pimc", "neural", "champion", "human")
AGENT_FORMS = ("random, heuristic, pimc, pimc:N, pimc:N:K, pimc:N[:K][:search][:infer], neural:PATH, champion, "
               "human")
"""Every spec :func:`make_agent` builds, as the error messages list them."""
MAX_SAMPLES = 10_000
"""Most ``pimc:N`` samples: each is a double-dummy search of every card, so more would make a
single decision last minutes."""
MAX_WORKERS = 256


def reset_agent(agent: Agent) -> None:
    """Call the agent's optional ``reset()`` (before a new match)."""
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset()


def check_workers(workers: object) -> int:
    """``workers`` as a process count from 1 to :data:`MAX_WORKERS`, or :class:`AgentError`."""
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise AgentError(f"workers must be an integer from 1 to {MAX_WORKERS}, got {workers!r}")
    return workers


def make_agent(spec: str, rules: Rules | str | dict | None = None, *, workers: int = 1) -> Agent:
    """Build the agent named by ``spec`` (see the module docstring) for ``rules``; ``workers``
    processes for the agents that can spread a batch (pimc).

    The spec is read exactly: a suffix a kind does not take (``random:3``), a number that is
    not a plain whole number in range (``pimc:abc``, ``pimc:0``, ``pimc:3:99``) or a
    checkpoint that is missing or not a file is an :class:`AgentError` listing the allowed
    forms, never ignored, so that what runs is what was asked for.
    """
    rules = resolve_rules(rules)
    workers = check_workers(workers)
    if not isinstance(spec, str) or not spec.strip():
        raise AgentError(f"an agent spec must be a non-empty string (allowed: {AGENT_FORMS}), got {spec!r}")
    kind, colon, arg = spec.strip().partition(":")
    if kind not in AGENT_KINDS:
        raise AgentError(f"unknown agent {spec!r} (allowed: {AGENT_FORMS})")
    if colon and kind in ("random", "heuristic", "champion", "human"):
        raise AgentError(f"the {kind} agent takes no ':' suffix, got {spec!r} (allowed: {AGENT_FORMS})")
    if kind == "random":
        from imperiale_agents.random_agent import RandomAgent

        return RandomAgent()
    if kind == "heuristic":
        from imperiale_agents.heuristic import HeuristicAgent

        return HeuristicAgent(rules)
    if kind == "human":
        from imperiale_agents.human import HumanAgent

        return HumanAgent()
    if kind == "pimc":
        from imperiale_agents.pimc import DEFAULT_SAMPLES, PIMCAgent

        samples, horizon, declarations, infer = ((DEFAULT_SAMPLES, 12, "heuristic", False) if not colon
                                                 else _pimc_numbers(arg, spec))
        model = None
        if infer:
            if rules.players != 2:
                raise AgentError(f"bad agent {spec!r}: 'infer' weighs worlds by the opponent's plays, which needs "
                                 f"two players; {rules.preset} has {rules.players}")
            try:
                model = _make_champion(rules, spec)
            except AgentError as exc:
                raise AgentError(f"bad agent {spec!r}: 'infer' models the opponent with the shipped champion, "
                                 f"and {exc}") from None
        return PIMCAgent(rules, samples=samples, workers=workers, horizon=horizon, declarations=declarations,
                         infer=model)
    if kind == "champion":
        return _make_champion(rules, spec)
    if not arg.strip():
        raise AgentError(f"neural:PATH needs the path of a checkpoint, e.g. neural:runs/latest/checkpoint.pt, "
                         f"got {spec!r}")
    return _make_neural(arg, rules, spec)


def _pimc_numbers(arg: str, spec: str) -> tuple[int, int, str, bool]:
    """``N[:K][:search][:infer]`` of a ``pimc:`` spec: 1 <= N <= MAX_SAMPLES samples, 1 <= K <= 12
    tricks, who answers the declarations (``search`` or the heuristic), and whether the worlds are
    weighed by the champion's likelihood of the opponent's plays (``infer``)."""
    parts = arg.split(":")
    allowed = (f"pimc:N[:K][:search][:infer] takes N samples from 1 to {MAX_SAMPLES}, optionally K tricks searched "
               f"from 1 to 12, 'search' for declarations decided by search and 'infer' for worlds weighed by the "
               f"opponent's plays, e.g. pimc:16, pimc:16:9, pimc:16:search or pimc:16:infer (allowed agents: "
               f"{AGENT_FORMS})")
    infer = len(parts) > 1 and parts[-1] == "infer"
    if infer:
        parts = parts[:-1]
    declarations = "heuristic"
    if len(parts) > 1 and parts[-1] == "search":
        parts, declarations = parts[:-1], "search"
    if len(parts) > 2 or not all(part.isascii() and part.isdigit() for part in parts):
        raise AgentError(f"bad agent {spec!r}: {allowed}")
    samples = int(parts[0])
    horizon = int(parts[1]) if len(parts) == 2 else 12
    if not 1 <= samples <= MAX_SAMPLES or not 1 <= horizon <= 12:
        raise AgentError(f"bad agent {spec!r}: {allowed}")
    return samples, horizon, declarations, infer


def _make_neural(path: str, rules: Rules, spec: str) -> Agent:
    """Load the policy of ``path`` (an exported policy or a training checkpoint): the file is checked
    first (a missing file, a folder or a pipe is named as such), and any failure of the loader
    becomes an :class:`AgentError`."""
    from imperiale_agents.neural import NeuralAgent
    from imperiale_agents.policy_file import CheckpointError
    from imperiale_env.core.inputs import InputError, input_file

    try:
        input_file(path, "checkpoint or policy file")
    except InputError as exc:
        raise AgentError(f"{spec}: {exc}") from None
    try:
        return NeuralAgent(path, rules=rules)
    except CheckpointError as exc:
        raise AgentError(f"{spec}: {exc}") from None


def _make_champion(rules: Rules, spec: str) -> Agent:
    """The champion shipped for the preset of ``rules`` (:mod:`imperiale_agents.champions`), loaded as a
    neural policy; a preset without one is an :class:`AgentError` naming those that have one."""
    from imperiale_agents.champions import champion_path, champion_presets

    path = champion_path(rules.preset)
    if path is None:
        have = ", ".join(champion_presets()) or "none"
        raise AgentError(f"the rules preset {rules.preset!r} has no champion (presets with one: {have}); "
                         f"play the rules of one of those, or another agent (allowed: {AGENT_FORMS})")
    agent = _make_neural(str(path), rules, spec)
    trained = (agent.train_rules or {}).get("preset")
    if trained != rules.preset:  # a file put under the wrong name: it would play rules it never learnt
        raise AgentError(f"{spec}: {path} was trained under the {trained!r} rules, not {rules.preset!r}")
    agent.name = "champion"
    return agent
