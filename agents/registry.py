"""Every agent kind, registered once: how a spec string names it, what it takes, and how it is built.

``imperiale eval``, ``play``, ``serve``, the training config's opponents and the environments'
``opponent=`` all build agents through :func:`make_agent`, so a kind added to :data:`KINDS` (one
entry and its module: see CONTRIBUTING.md) is known everywhere at once, and every error lists the
same forms.

Specs:

==========================  ==============================================================
``random``                  uniform over the legal actions
``heuristic``               the rule-based player of :mod:`imperiale_agents.policies.heuristic`
``pimc``, ``pimc:N[:K]``    Perfect Information Monte Carlo (:mod:`imperiale_agents.search.pimc`): ``N``
                            sampled deals (16), the last ``K`` tricks searched (12)
``pimc:...:search``         the declarations decided by sampled worlds too
                            (:mod:`imperiale_agents.search.declaration_search`)
``pimc:...:infer``          worlds weighed by how likely the champion finds the opponent's plays
                            (:mod:`imperiale_agents.search.play_likelihood`; two players)
``pimc:...:voids``          the sampler that knows the voids but not the other proofs of play
                            (the one before observation version 1; for comparisons)
``pimc:...:belief``         worlds resampled by the preset's shipped belief model
                            (:mod:`imperiale_agents.search.belief_model`)
``pimc:...:fitted``         the same worlds matched to the belief's fitted marginals
``ismcts``, ``ismcts:N``    OpenSpiel's ISMCTS (:mod:`imperiale_agents.search.ismcts`; the ``openspiel`` extra):
                            ``N`` simulations a decision (100), random rollouts
``neural:PATH``             a trained policy: an exported policy (.npz) or a training checkpoint
``champion``                the policy shipped for the rules played (:mod:`imperiale_agents.champions`)
``champion:search``         the search shipped for the rules played (its spec: ``SEARCH_CHAMPIONS`` there)
``human``                   a person at the terminal (:mod:`imperiale_agents.policies.human`)
``module:Class``            your own agent: the class ``Class`` of the importable module ``module``
``file.py:Class``           ... or of the Python file ``file.py``
==========================  ==============================================================

Your own class is built as ``Class(rules)`` if its constructor takes an argument, else
``Class()``, and must have ``act(obs, mask, rng)`` (:class:`imperiale_agents.base.Agent`).  Such a
spec runs the code it names, so it is for the command line and Python only: the web table
refuses it (:func:`loads_code`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from imperiale_agents.errors import AgentError
from imperiale_env.core.rules import Rules, resolve_rules

MAX_SAMPLES = 10_000
"""Most ``pimc:N`` samples: each is a double-dummy search of every card, so more would make a
single decision last minutes."""
MAX_SIMULATIONS = 10_000
"""Most ``ismcts:N`` simulations: each replays the deal in a resampled world and plays it out (a
millisecond or two), so more would make a single decision last minutes."""
MAX_WORKERS = 256


@dataclass(frozen=True)
class AgentKind:
    """One kind of agent: its spec ``form`` (as error messages list it), whether it takes a ``:``
    argument, whether training may use it as an opponent, and its builder
    ``build(arg, rules, spec, workers)`` (``arg``: what follows the first ``:``, or ``None``)."""

    name: str
    form: str
    takes_arg: bool
    opponent: bool
    build: Callable[[str | None, Rules, str, int], Any]


def _random(arg, rules, spec, workers):
    from imperiale_agents.policies.random_agent import RandomAgent

    return RandomAgent()


def _heuristic(arg, rules, spec, workers):
    from imperiale_agents.policies.heuristic import HeuristicAgent

    return HeuristicAgent(rules)


def _human(arg, rules, spec, workers):
    from imperiale_agents.policies.human import HumanAgent

    return HumanAgent()


def _pimc(arg, rules, spec, workers):
    from imperiale_agents.search.pimc import DEFAULT_SAMPLES, PIMCAgent

    samples, horizon, declarations, infer, knowledge = ((DEFAULT_SAMPLES, 12, "heuristic", False, "all")
                                                        if arg is None else _pimc_numbers(arg, spec))
    belief, fitted = None, knowledge == "fitted"
    if knowledge in ("belief", "fitted"):
        from imperiale_agents.search.belief_model import BeliefFileError, shipped_belief

        try:
            belief = shipped_belief(rules.preset)
        except BeliefFileError as exc:
            raise AgentError(f"bad agent {spec!r}: {knowledge!r} draws worlds by the shipped belief model, and "
                             f"{exc}") from None
        knowledge = "all"
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
                     infer=model, knowledge=knowledge, belief=belief, fitted=fitted)


def _ismcts(arg, rules, spec, workers):
    # OpenSpiel's ISMCTS spends its first simulation expanding the root: it needs two to choose.
    if arg is not None and not (arg.isascii() and arg.isdigit() and 2 <= int(arg) <= MAX_SIMULATIONS):
        raise AgentError(f"bad agent {spec!r}: ismcts:N takes N simulations a decision from 2 to {MAX_SIMULATIONS}, "
                         f"e.g. ismcts:100 (allowed agents: {AGENT_FORMS})")
    try:
        from imperiale_agents.search.ismcts import DEFAULT_SIMULATIONS, ISMCTSAgent
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in ("pyspiel", "open_spiel"):
            raise
        raise AgentError(f"{spec}: the ismcts agent is OpenSpiel's ISMCTS, and OpenSpiel is not installed "
                         "(pip install 'imperiale[openspiel]')") from None
    return ISMCTSAgent(rules, int(arg) if arg is not None else DEFAULT_SIMULATIONS, workers=workers)


def _neural(arg, rules, spec, workers):
    if not arg or not arg.strip():
        raise AgentError(f"neural:PATH needs the path of a checkpoint, e.g. neural:runs/latest/checkpoint.pt, "
                         f"got {spec!r}")
    return _make_neural(arg, rules, spec)


def _champion(arg, rules, spec, workers):
    if arg is None:
        return _make_champion(rules, spec)
    if arg == "search":
        return _make_search_champion(rules, spec, workers)
    raise AgentError(f"bad agent {spec!r}: champion is the shipped network, champion:search the shipped search "
                     f"(allowed agents: {AGENT_FORMS})")


#: Every agent kind, by the name that starts its spec.
KINDS: dict[str, AgentKind] = {kind.name: kind for kind in (
    AgentKind("random", "random", False, True, _random),
    AgentKind("heuristic", "heuristic", False, True, _heuristic),
    AgentKind("pimc", "pimc, pimc:N, pimc:N:K, pimc:N[:K][:search][:infer|:voids|:belief|:fitted]", True, True,
              _pimc),
    AgentKind("ismcts", "ismcts, ismcts:N", True, True, _ismcts),
    AgentKind("neural", "neural:PATH", True, True, _neural),
    AgentKind("champion", "champion, champion:search", True, True, _champion),
    AgentKind("human", "human", False, False, _human),
)}
AGENT_KINDS = tuple(KINDS)
AGENT_FORMS = ", ".join(kind.form for kind in KINDS.values()) + ", module:Class, file.py:Class"
"""Every spec :func:`make_agent` builds, as the error messages list them."""

_CUSTOM = re.compile(r"^(?P<source>[A-Za-z_][\w.]*|.+\.py):(?P<cls>[A-Za-z_]\w*)$")


def check_workers(workers: object) -> int:
    """``workers`` as a process count from 1 to :data:`MAX_WORKERS`, or :class:`AgentError`."""
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise AgentError(f"workers must be an integer from 1 to {MAX_WORKERS}, got {workers!r}")
    return workers


def loads_code(spec: str) -> bool:
    """Whether ``spec`` names code to import (``module:Class``, ``file.py:Class``) or a file to read
    (``neural:PATH``): what a web page must never be allowed to ask for."""
    kind = spec.strip().partition(":")[0]
    return kind == "neural" or (kind not in KINDS and _CUSTOM.match(spec.strip()) is not None)


def opponent_spec(spec: str) -> bool:
    """Is ``spec`` of a kind training may play against (its details are checked when it is built)?"""
    kind = spec.strip().partition(":")[0]
    return KINDS[kind].opponent if kind in KINDS else _CUSTOM.match(spec.strip()) is not None


def make_agent(spec: str, rules: Rules | str | dict | None = None, *, workers: int = 1) -> Any:
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
    name, colon, arg = spec.strip().partition(":")
    kind = KINDS.get(name)
    if kind is None:
        if _CUSTOM.match(spec.strip()):
            return _make_custom(spec.strip(), rules)
        raise AgentError(f"unknown agent {spec!r} (allowed: {AGENT_FORMS})")
    if colon and not kind.takes_arg:
        raise AgentError(f"the {name} agent takes no ':' suffix, got {spec!r} (allowed: {AGENT_FORMS})")
    return kind.build(arg if colon else None, rules, spec, workers)


def _make_custom(spec: str, rules: Rules) -> Any:
    """``module:Class`` or ``file.py:Class``: import the module (or run the file, as Python runs a
    script's imports), take the class, build it with the rules if it takes an argument."""
    match = _CUSTOM.match(spec)
    source, name = match["source"], match["cls"]
    module = _load_source(source, spec)
    cls = getattr(module, name, None)
    if not inspect.isclass(cls):
        raise AgentError(f"{spec}: {source} has no class {name!r}")
    try:
        takes_rules = any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
                          for p in inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        takes_rules = False
    try:
        agent = cls(rules) if takes_rules else cls()
    except (Exception, SystemExit) as exc:  # the user's code: whatever it raises is named, not a traceback
        raise AgentError(f"{spec}: building {name}({'rules' if takes_rules else ''}) failed: "
                         f"{type(exc).__name__}: {exc}") from None
    if not callable(getattr(agent, "act", None)):
        raise AgentError(f"{spec}: {name} has no act(obs, mask, rng) method; see imperiale_agents.base.Agent")
    if not isinstance(getattr(agent, "name", None), str):
        agent.name = spec
    from imperiale_agents.checked import CheckedAgent  # the batched engine behind it: imported when needed

    return CheckedAgent(agent, spec)


def _load_source(source: str, spec: str):
    if source.endswith(".py"):
        path = Path(source)
        if not path.is_file():
            raise AgentError(f"{spec}: no such Python file {source!r}")
        name = "imperiale_custom_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module  # so that worker processes and pickles find the class
        try:
            loader_spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            del sys.modules[name]
            raise AgentError(f"{spec}: running {source} failed: {type(exc).__name__}: {exc}") from None
        return module
    try:
        return importlib.import_module(source)
    except ImportError as exc:
        raise AgentError(f"{spec}: cannot import module {source!r} ({exc}); give module:Class of an importable "
                         "module or path/to/file.py:Class") from None
    except (Exception, SystemExit) as exc:  # the module's own code failed while it was imported
        raise AgentError(f"{spec}: importing {source} failed: {type(exc).__name__}: {exc}") from None


def _pimc_numbers(arg: str, spec: str) -> tuple[int, int, str, bool, str]:
    """``N[:K][:search][:infer|:voids|:belief|:fitted]`` of a ``pimc:`` spec: 1 <= N <= MAX_SAMPLES
    samples, 1 <= K <= 12 tricks, who answers the declarations (``search`` or the heuristic), whether
    the worlds are weighed by the champion's likelihood of the opponent's plays (``infer``), and what
    the sampler keeps out of the opponents' hands (``voids``: the voids alone, the sampler before
    observation version 1) or how its worlds are resampled (``belief``: by the shipped belief model;
    ``fitted``: by it, matched to its fitted marginals)."""
    parts = arg.split(":")
    allowed = (f"pimc:N[:K][:search][:infer|:voids|:belief|:fitted] takes N samples from 1 to {MAX_SAMPLES}, "
               f"optionally K tricks searched from 1 to 12, 'search' for declarations decided by search, 'infer' for "
               f"worlds weighed by the opponent's plays, 'voids' for the sampler that knows only the voids, 'belief' "
               f"for worlds resampled by the belief model and 'fitted' for worlds that follow its fitted marginals, "
               f"e.g. pimc:16, pimc:16:9, pimc:16:search, pimc:16:infer, pimc:16:voids, pimc:16:belief or "
               f"pimc:16:fitted (allowed agents: {AGENT_FORMS})")
    last = parts[-1] if len(parts) > 1 else ""
    infer, knowledge = last == "infer", last if last in ("voids", "belief", "fitted") else "all"
    if last in ("infer", "voids", "belief", "fitted"):
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
    return samples, horizon, declarations, infer, knowledge


def _make_neural(path: str, rules: Rules, spec: str) -> Any:
    """Load the policy of ``path`` (an exported policy or a training checkpoint): the file is checked
    first (a missing file, a folder or a pipe is named as such), and any failure of the loader
    becomes an :class:`AgentError`."""
    from imperiale_agents.policies.neural import NeuralAgent
    from imperiale_agents.policies.policy_file import CheckpointError
    from imperiale_env.core.input_checks import InputError, input_file

    try:
        input_file(path, "checkpoint or policy file")
    except InputError as exc:
        raise AgentError(f"{spec}: {exc}") from None
    try:
        return NeuralAgent(path, rules=rules)
    except CheckpointError as exc:
        raise AgentError(f"{spec}: {exc}") from None


def _make_search_champion(rules: Rules, spec: str, workers: int) -> Any:
    """The search champion of the preset of ``rules`` (:data:`imperiale_agents.champions.SEARCH_CHAMPIONS`),
    named ``champion:search``; a preset without one is an :class:`AgentError` naming those that have one."""
    from imperiale_agents.champions import SEARCH_CHAMPIONS

    inner = SEARCH_CHAMPIONS.get(rules.preset)
    if inner is None:
        raise AgentError(f"the rules preset {rules.preset!r} has no search champion (presets with one: "
                         f"{', '.join(SEARCH_CHAMPIONS)}); play the rules of one of those, or another agent "
                         f"(allowed: {AGENT_FORMS})")
    agent = make_agent(inner, rules, workers=workers)
    agent.name = "champion:search"
    return agent


def _make_champion(rules: Rules, spec: str) -> Any:
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
