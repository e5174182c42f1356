"""Tournament matches as Ray tasks: ``imperiale eval --ray [ADDRESS]``.

A match is a pure function of the tournament plan and its index ``k`` (the games' seeds come
from the tournament seed, the agents' generators from ``(seed, k, agent)``; see
:func:`imperiale_agents.tournament.match.play_match`), so playing match ``k`` in a Ray task gives the very log
the local run gives, and the tables built from the logs are the same.

**What travels.**  Once per tournament, the agents (``ray.put``): a spec string for the
agents that are cheap to rebuild (``random``, ``heuristic``, ``pimc...``, rebuilt in the task,
pimc with ``--workers`` processes there), the built object for the others (``neural:PATH``:
its network, so the checkpoint file need not exist on the other machines; custom
:class:`~imperiale_agents.base.Agent` objects).  Per task: the rules (a small dataclass), the lineup and the
plan's numbers, and back the match's :class:`~imperiale_agents.tournament.stats.MatchLog` (a few arrays of
``games`` rows, about ``games * (deals * players * 8 + 80)`` bytes) with its timings.

**Failures.**  A task whose worker process dies is run again by Ray (``max_retries``), and
each match is taken from the first result Ray hands back for it, so nothing is counted twice
or lost.  An error raised by an agent inside a task is raised here as itself.  A worker that
keeps dying, or a cluster that goes away, ends with a :class:`~imperiale_agents.parallel.ray_cluster.ClusterError`.
"""

from __future__ import annotations

from collections.abc import Iterator

from imperiale_agents.base import Agent, make_agent
from imperiale_agents.parallel.ray_cluster import ClusterError, check_cpus, connect, failure, import_ray
from imperiale_agents.tournament.match import MatchPlan, play_match
from imperiale_agents.tournament.stats import AgentTiming, MatchLog
from imperiale_env.core.rules import Rules

#: Agent kinds rebuilt from their spec in the task (cheap); the others travel as built objects.
REBUILT = ("random", "heuristic", "pimc")


def _payload(spec: str | Agent, built: Agent) -> str | Agent:
    if isinstance(spec, str) and spec.strip().partition(":")[0] in REBUILT:
        return spec
    return built


def play_remote_match(rules: Rules, agents: list[str | Agent], lineup: tuple[int, ...], groups: int, seed: int,
                      k: int, single_deal: bool, workers: int) -> tuple[MatchLog, dict[int, AgentTiming]]:
    """The body of one task: build the agents of the lineup and play match ``k``."""
    built: list[Agent | None] = [None] * len(agents)
    for a in set(lineup):
        spec = agents[a]
        built[a] = make_agent(spec, rules, workers=workers) if isinstance(spec, str) else spec
    timings: dict[int, AgentTiming] = {}
    try:
        log = play_match(rules, built, lineup, groups, seed, k, single_deal=single_deal, timings=timings)
    finally:
        for a in set(lineup):
            if isinstance(agents[a], str) and callable(getattr(built[a], "close", None)):
                built[a].close()
    return log, timings


class RayMatchRunner:
    """A :data:`~imperiale_agents.tournament.match.MatchRunner` that plays every match as one Ray task.

    ``address``: a cluster (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``) or ``None``/``"local"``
    for a local instance of ``num_cpus`` CPUs; ``max_retries``: reruns of a task whose worker died."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None, max_retries: int = 3):
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.address, self.num_cpus, self.max_retries = address, num_cpus, max_retries

    def __call__(self, plan: MatchPlan, bar=None) -> Iterator[tuple[int, MatchLog, dict[int, AgentTiming]]]:
        ray = import_ray()
        session = connect(self.address, self.num_cpus)
        pending: dict = {}
        try:
            check_cpus(plan.workers, 1, f"a match task with --workers {plan.workers}")
            payload = [_payload(s, b) for s, b in zip(plan.specs, plan.agents, strict=True)]
            try:
                agents_ref = ray.put(payload)
            except Exception as exc:  # what cannot be pickled raises many kinds
                raise ClusterError(f"the agents cannot be sent to Ray workers: {type(exc).__name__}: {exc}") from None
            task = ray.remote(num_cpus=plan.workers, max_retries=self.max_retries)(play_remote_match)
            pending = {task.remote(plan.rules, agents_ref, lineup, plan.groups, plan.seed, k, plan.single_deal,
                                   plan.workers): k for k, lineup in enumerate(plan.lineups)}
            while pending:
                try:
                    ready, _ = ray.wait(list(pending), num_returns=1)
                    ref = ready[0]
                    log, timings = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    raise failure(exc, session.address) from None
                k = pending.pop(ref)
                if bar is not None:
                    bar.set_postfix_str(" vs ".join(plan.names[i] for i in plan.lineups[k]))
                    bar.update(plan.groups * plan.rules.players)
                yield k, log, timings
        finally:
            for ref in pending:  # left early (an error, Ctrl-C): free the cluster of the matches still queued
                ray.cancel(ref, force=True)
            session.close()
