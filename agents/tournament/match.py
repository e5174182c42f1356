"""Round-robin tournaments on the batched engine, with duplicate deals and honest intervals.

**Duplicate deals.**  Every game seed is played once per *seating*: with two players the two
agents swap seats (2 games per seed), with three players the lineup is rotated over the 3
cyclic seatings (3 games per seed).  A game seed fixes every deal of the game (the deal of
index ``d`` is a pure function of ``(seed, d)``) and the first dealer, so in the two games of
a pair each agent receives, deal after deal, exactly the cards the other agent received in
the other game (until the games diverge in length).  The group of games that share a seed is
one statistical unit: the intervals are computed over those units (paired), which removes
the luck of the cards instead of averaging it away.

**Games and deals.**  ``games`` = whole games to ``rules.target_imperiales``; a game is won by
the player who reaches the target.  A deal is won by the player whose score value
``impériales + points / 24`` grew most in that deal (a tie splits the deal equally among the
tied seats, so two tied seats of one agent make a whole deal of it: with three players, equal
agents then score exactly their seats' share, 2/3 or 1/3; :func:`~imperiale_agents.tournament.stats.pair_score`);
the change of each player's value in each deal is reconstructed exactly from the
engine's score events (``record_events=True``: awards add points, gains add impériales,
wipes remove points; crossing 24 points is value-neutral), because the engine scores the
next deal's turned honour before the first decision of that deal.  ``single_deal=True``
plays one deal per game instead (``imperiale eval --deals N``), for deal-level figures.

**Results.**  For each pairing: game and deal win rates with 95 % intervals (paired over
seed groups, normal approximation of the cluster mean; the Wilson interval treating every
game as independent is given too), the mean impériale margin per deal with its interval,
and per agent the mean decision time.  A Bradley-Terry model fitted on every game (MM
algorithm, a half draw per pairing as a prior so that a clean sweep stays finite) gives Elo
ratings (``400 log10`` of the strengths, the first agent at 0), each with a 95 % interval from
a bootstrap over seed groups (every match's groups drawn again with replacement, the model
fitted again; percentiles of :data:`RATING_RESAMPLES` fits), which keeps the pairing of the
duplicate games: a rating ladder (docs/ladder.md) is one tournament of every agent.  The figures are
computed in :mod:`imperiale_agents.tournament.stats`; :mod:`imperiale_agents.tournament.report`
writes the Markdown page, ``results.json``, ``results.md`` and, when matplotlib is importable,
``matrix.png``.

Deterministic for a seed: the seeds of the games, the agents' random generators (one per
agent and match) and the batch layout are all functions of the tournament seed.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from imperiale_agents.base import Agent, check_workers, make_agent, reset_agent
from imperiale_agents.driver import Turn, act_by, checked_actions, drive
from imperiale_agents.errors import AgentMisbehaved
from imperiale_agents.tournament.stats import (
    AgentTiming,
    MatchLog,
    PairStats,
    deal_deltas,
    elo_intervals,
    elo_ratings,
    pair_stats,
)
from imperiale_env.batch import BatchGame
from imperiale_env.core.input_checks import seed as check_seed
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.core.shuffle import batch_seeds

MIN_GROUPS = 2
"""Fewest seed groups per lineup: the paired intervals are computed over groups, and one group
gives no spread (the interval would be undefined)."""


# ---------------------------------------------------------------------- playing


def seatings(lineup: Sequence[int], players: int) -> list[tuple[int, ...]]:
    """The duplicate seatings of a lineup: its ``players`` cyclic rotations."""
    return [tuple(lineup[(s + r) % players] for s in range(players)) for r in range(players)]


def lineups(num_agents: int, players: int) -> list[tuple[int, ...]]:
    """Round-robin lineups: every pair (two players); every trio, or with only two agents
    the lineups (A, A, B) and (A, B, B) (three players)."""
    if num_agents < 2:
        raise ValueError("a tournament needs at least two agents")
    if players == 2:
        return list(itertools.combinations(range(num_agents), 2))
    if num_agents == 2:
        return [(0, 0, 1), (0, 1, 1)]
    return list(itertools.combinations(range(num_agents), 3))


class _MatchTable:
    """The seats of one match: who acts in each game (``seat_agent``), each agent's timing, and
    what a step leaves (the score events, the games finished for the progress bar)."""

    def __init__(self, bg: BatchGame, agents: Sequence[Agent], seat_agent: np.ndarray,
                 rngs: dict[int, np.random.Generator], timings: dict[int, AgentTiming], progress=None):
        self.bg, self.agents, self.seat_agent, self.rngs = bg, agents, seat_agent, rngs
        self.timings, self.progress = timings, progress
        self.events: list[np.ndarray] = []
        self.finished = 0

    def choose(self, turn: Turn) -> np.ndarray:
        """Every agent answers for the live games where it holds the acting seat."""
        acting = np.where(turn.live, self.seat_agent[np.arange(len(turn.seat)), turn.seat], -1)
        return act_by(acting, lambda a, rows: self._act(a, turn, rows), np.zeros(len(acting), dtype=np.int64))

    def _act(self, a: int, turn: Turn, rows: np.ndarray) -> np.ndarray:
        agent = self.agents[a]
        t0 = time.perf_counter()
        chosen = agent.act(turn.obs[rows], turn.mask[rows], self.rngs[a])
        tm = self.timings.setdefault(a, AgentTiming())
        tm.seconds += time.perf_counter() - t0
        tm.decisions += len(rows)
        tm.calls += 1
        return checked_actions(chosen, turn.mask[rows], f"agent {agent.name!r}", rows)

    def settle(self, turn: Turn, rewards: np.ndarray, terminated: np.ndarray) -> None:
        self.events.append(self.bg.pop_events())
        now = int(self.bg.done.sum())
        if self.progress is not None and now > self.finished:
            self.progress.update(now - self.finished)
        self.finished = now


def play_match(
    rules: Rules,
    agents: Sequence[Agent],
    lineup: tuple[int, ...],
    groups: int,
    seed: int,
    match_index: int,
    *,
    single_deal: bool = False,
    timings: dict[int, AgentTiming] | None = None,
    progress=None,
) -> MatchLog:
    """Play ``groups`` seed groups of ``lineup`` (agent indices by lineup position)."""
    P = rules.players
    rots = seatings(lineup, P)
    n = groups * P
    group_seeds = batch_seeds(seed, groups)
    seeds = np.repeat(group_seeds, P)
    seat_agent = np.array([rots[g % P] for g in range(n)], dtype=np.int64)
    bg = BatchGame(rules, n, single_deal=single_deal, record_events=True)
    bg.reset(seeds)
    involved = sorted(set(lineup))
    rngs = {a: np.random.default_rng([seed, match_index, a]) for a in involved}
    for a in involved:
        reset_agent(agents[a])
    timings = {} if timings is None else timings
    table = _MatchTable(bg, agents, seat_agent, rngs, timings, progress)
    drive(bg, table.choose, settle=table.settle)
    ev = np.concatenate(table.events) if table.events else np.zeros((0, 5), dtype=np.int64)
    num_deals = np.zeros(n, dtype=np.int64)
    if len(ev):
        np.maximum.at(num_deals, ev[:, 0], ev[:, 1] + 1)
    num_deals = np.maximum(num_deals, bg.deal_index + 1)
    deltas = deal_deltas(rules, ev, n, int(num_deals.max()))
    return MatchLog(
        lineup=tuple(lineup), seat_agent=seat_agent, group=np.arange(n) // P, seeds=seeds,
        winner_seat=bg.winner.copy(), deltas=deltas, num_deals=num_deals,
        final_imperiales=bg.imperiales.copy(), final_points=bg.points.copy(),
    )


@dataclass(frozen=True)
class MatchPlan:
    """Everything the matches of a tournament share; match ``k`` plays ``lineups[k]`` with the
    agent generators seeded from ``(seed, k)``, so matches can be played in any order, anywhere."""

    rules: Rules
    specs: list[str | Agent]  # as given to run_tournament
    agents: list[Agent]  # built from the specs in this process
    names: list[str]
    lineups: list[tuple[int, ...]]
    groups: int
    seed: int
    single_deal: bool
    workers: int


#: Plays the matches of a plan and yields ``(k, log, timings of that match)`` once per match, in any order.
MatchRunner = Callable[[MatchPlan, Any], Iterable[tuple[int, MatchLog, dict[int, AgentTiming]]]]


def play_matches(plan: MatchPlan, bar=None) -> Iterator[tuple[int, MatchLog, dict[int, AgentTiming]]]:
    """The local runner: the matches one after another in this process (``bar``: a tqdm over games)."""
    for k, lineup in enumerate(plan.lineups):
        if bar is not None:
            bar.set_postfix_str(" vs ".join(plan.names[i] for i in lineup))
        timings: dict[int, AgentTiming] = {}
        log = play_match(plan.rules, plan.agents, lineup, plan.groups, plan.seed, k, single_deal=plan.single_deal,
                         timings=timings, progress=bar)
        yield k, log, timings


@dataclass
class TournamentResult:
    rules: Rules
    names: list[str]
    seed: int
    groups: int
    single_deal: bool
    logs: list[MatchLog]
    pairs: list[PairStats]
    timings: dict[int, AgentTiming]
    elo: np.ndarray
    elo_ci: np.ndarray  # (agents, 2): 95 % bootstrap interval of each rating
    wins: np.ndarray  # wins[i, j]: games i won against j (draws half)
    seconds: float
    matches_planned: int = 0  # lineups of the round robin; ``len(logs)`` of them were played
    partial: bool = False  # stopped early: the figures cover the finished matches only
    stopped_by: str = ""  # why, when an agent failed (empty: Ctrl-C or a signal)

    def partial_note(self) -> str:
        """What a partial result covers, and how to get the whole one."""
        if self.stopped_by:
            return (f"{len(self.logs)} of {self.matches_planned} matches finished before an agent failed; the "
                    "results cover those matches only (the failing match is dropped whole)")
        return (f"{len(self.logs)} of {self.matches_planned} matches finished before the interruption; the results "
                "cover those matches only. The tournament is deterministic: run the same command (same --seed) "
                "again to play it whole.")

    def to_dict(self) -> dict[str, Any]:
        def rnd(x):
            return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 6)

        return {
            "rules": self.rules.to_dict(),
            "agents": self.names,
            "seed": self.seed,
            "mode": "single_deal" if self.single_deal else "whole_games",
            "target_imperiales": self.rules.target_imperiales,
            "seed_groups_per_lineup": self.groups,
            "games_per_group": self.rules.players,
            "seconds": round(self.seconds, 3),
            "partial": self.partial,
            "stopped_by": self.stopped_by,
            "matches_finished": len(self.logs),
            "matches_planned": self.matches_planned,
            "pairings": [
                {
                    "a": self.names[p.a], "b": self.names[p.b], "games": p.games, "seed_groups": p.groups,
                    "lineup": [self.names[i] for i in p.extra["lineup"]],
                    "a_game_win_rate": rnd(p.game_rate),
                    "a_game_win_ci95_paired": [rnd(x) for x in p.game_ci_paired],
                    "a_game_win_ci95_wilson": [rnd(x) for x in p.game_ci_wilson],
                    "deals": p.deals, "a_deal_win_rate": rnd(p.deal_rate),
                    "a_deal_win_ci95_paired": [rnd(x) for x in p.deal_ci_paired],
                    "a_margin_imperiales_per_deal": rnd(p.margin_per_deal),
                    "a_margin_ci95_paired": [rnd(x) for x in p.margin_ci],
                    **{k: v for k, v in p.extra.items() if k != "lineup"},
                }
                for p in self.pairs
            ],
            "ratings": [
                {"agent": self.names[i], "elo": rnd(self.elo[i]), "elo_ci95": [rnd(x) for x in self.elo_ci[i]]}
                for i in np.argsort(-self.elo, kind="stable")
            ],
            "decision_time_ms": {
                self.names[a]: {"ms_per_decision": rnd(t.ms_per_decision), "decisions": t.decisions, "calls": t.calls}
                for a, t in sorted(self.timings.items())
            },
            "win_matrix": [[rnd(x) for x in row] for row in self.win_matrix().tolist()],
        }

    def win_matrix(self) -> np.ndarray:
        """``M[i, j]``: the game score rate of i against j (NaN where they did not meet)."""
        m = len(self.names)
        out = np.full((m, m), np.nan)
        for p in self.pairs:
            out[p.a, p.b] = p.game_rate
            out[p.b, p.a] = 1 - p.game_rate
        return out

def run_tournament(
    agents: Sequence[str | Agent],
    rules: Rules | str | dict | None = None,
    *,
    groups: int = 100,
    seed: int = 0,
    single_deal: bool = False,
    progress: bool = False,
    workers: int = 1,
    stop_on_interrupt: bool = False,
    runner: MatchRunner | None = None,
) -> TournamentResult:
    """Round robin of ``agents`` (specs or :class:`Agent` objects); ``groups`` seed groups per lineup
    (at least :data:`MIN_GROUPS`); ``workers`` processes for the agents built from specs that can
    use them (pimc); ``runner`` plays the matches (default :func:`play_matches`, here one after
    another; a Ray runner spreads them over a cluster with the same results, since a match
    depends only on its plan and index).

    Every spec is built before the first game, so a bad one costs nothing.  With
    ``stop_on_interrupt``, Ctrl-C ends the tournament after the finished matches: the result
    covers them only and is marked ``partial`` (the match that was interrupted is dropped
    whole, since a match cut short would favour whichever agent finishes games faster); so does
    a user's own agent that fails (:class:`~imperiale_agents.checked.AgentMisbehaved`, its
    message in ``stopped_by``).
    """
    rules = resolve_rules(rules)
    check_workers(workers)
    seed = check_seed(seed, "tournament seed")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < MIN_GROUPS:
        raise ValueError(f"groups must be an integer of at least {MIN_GROUPS} (the paired intervals need two seed "
                         f"groups), got {groups!r}")
    names = _unique_names([a if isinstance(a, str) else getattr(a, "name", type(a).__name__) for a in agents])
    ups = lineups(len(agents), rules.players)
    built: list[Agent] = []
    try:
        for a in agents:
            built.append(make_agent(a, rules, workers=workers) if isinstance(a, str) else a)
        plan = MatchPlan(rules=rules, specs=list(agents), agents=built, names=names, lineups=ups, groups=groups,
                         seed=seed, single_deal=single_deal, workers=workers)
        return _play_round_robin(plan, runner or play_matches, progress=progress,
                                 stop_on_interrupt=stop_on_interrupt)
    finally:
        for a, spec in zip(built, agents, strict=False):
            if isinstance(spec, str) and callable(getattr(a, "close", None)):
                a.close()


def _play_round_robin(plan: MatchPlan, runner: MatchRunner, *, progress: bool,
                      stop_on_interrupt: bool) -> TournamentResult:
    rules, names, ups, groups, seed, single_deal = (plan.rules, plan.names, plan.lineups, plan.groups, plan.seed,
                                                   plan.single_deal)
    bar = None
    if progress:
        bar = tqdm(total=len(ups) * groups * rules.players, unit="game", desc="tournament")
    t0 = time.perf_counter()
    timings: dict[int, AgentTiming] = {}
    played: dict[int, MatchLog] = {}
    partial, stopped_by = False, ""
    matches = runner(plan, bar)
    try:
        for k, log, match_timings in matches:
            played[k] = log
            for a, t in match_timings.items():
                total = timings.setdefault(a, AgentTiming())
                total.decisions += t.decisions
                total.seconds += t.seconds
                total.calls += t.calls
    except KeyboardInterrupt:
        if not stop_on_interrupt:
            raise
        partial = True
    except AgentMisbehaved as exc:  # a user's own agent: the matches it did not spoil are kept
        if not stop_on_interrupt:
            raise
        partial, stopped_by = True, str(exc)
    finally:
        if hasattr(matches, "close"):
            matches.close()  # a runner's queued matches are cancelled
        if bar is not None:
            bar.close()
    logs, pairs = [played[k] for k in sorted(played)], []
    m = len(names)
    wins = np.zeros((m, m))
    for k, log in zip(sorted(played), logs, strict=True):
        for a, b in itertools.combinations(sorted(set(log.lineup)), 2):
            st = pair_stats(log, a, b, single_deal, match=k)
            pairs.append(st)
            wins[a, b] += st.game_score
            wins[b, a] += st.games - st.game_score
    return TournamentResult(rules=rules, names=names, seed=seed, groups=groups, single_deal=single_deal,
                            logs=logs, pairs=pairs, timings=timings, elo=elo_ratings(wins),
                            elo_ci=elo_intervals(pairs, m, seed), wins=wins,
                            seconds=time.perf_counter() - t0, matches_planned=len(ups), partial=partial,
                            stopped_by=stopped_by)


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out
