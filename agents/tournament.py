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
``impériales + points / 24`` grew most in that deal (a tie is half a deal to each of the
tied); the change of each player's value in each deal is reconstructed exactly from the
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
duplicate games: a rating ladder (docs/ladder.md) is one tournament of every agent.  :func:`write_outputs`
writes ``results.json``, ``results.md`` and, when matplotlib is importable, ``matrix.png``.

Deterministic for a seed: the seeds of the games, the agents' random generators (one per
agent and match) and the batch layout are all functions of the tournament seed.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from imperiale_agents.base import Agent, check_workers, make_agent, reset_agent
from imperiale_agents.driver import Turn, act_by, checked_actions, drive
from imperiale_agents.errors import AgentMisbehaved
from imperiale_env.batch import BatchGame
from imperiale_env.core.events import value_table as event_value_table
from imperiale_env.core.inputs import InputError, output_dir
from imperiale_env.core.inputs import seed as check_seed
from imperiale_env.core.rules import Rules, resolve_rules
from imperiale_env.core.shuffle import batch_seeds

Z95 = 1.959963984540054
RATING_RESAMPLES = 1000
"""Bootstrap resamples of the seed groups behind each rating interval (all fitted at once, in
well under a second for a ladder of ten agents)."""
MIN_GROUPS = 2
"""Fewest seed groups per lineup: the paired intervals are computed over groups, and one group
gives no spread (the interval would be undefined)."""


# ---------------------------------------------------------------------- deal accounting


def deal_deltas(rules: Rules, events: np.ndarray, num_games: int, max_deals: int) -> np.ndarray:
    """``(games, deals, players)``: the change of each player's value (impériales + points/24)
    in each deal, from the rows of :meth:`BatchGame.pop_events`."""
    out = np.zeros((num_games, max_deals, rules.players), dtype=np.float64)
    if not len(events):
        return out
    g, d, kind, p, amount = (events[:, i] for i in range(5))
    np.add.at(out, (g, d, p), event_value_table(rules)[kind] * amount)
    return out


# ---------------------------------------------------------------------- statistics


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    phat = successes / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def cluster_ratio(num: np.ndarray, den: np.ndarray, z: float = Z95) -> tuple[float, float, float]:
    """Ratio ``sum(num) / sum(den)`` over clusters (seed groups) with its 95 % interval
    (linearised cluster-robust standard error); ``(estimate, low, high)``."""
    num, den = np.asarray(num, float), np.asarray(den, float)
    keep = den > 0
    num, den = num[keep], den[keep]
    n = len(num)
    if n == 0:
        return (float("nan"), float("nan"), float("nan"))
    r = num.sum() / den.sum()
    if n < 2:
        return (float(r), float("nan"), float("nan"))
    resid = num - r * den
    se = math.sqrt((resid**2).sum() / (n * (n - 1))) / den.mean()
    return (float(r), float(r - z * se), float(r + z * se))


def bradley_terry(wins: np.ndarray, prior: float = 0.5, iters: int = 10000, tol: float = 1e-10) -> np.ndarray:
    """Strengths from a matrix ``wins[i, j]`` (games i won against j, draws counted half),
    by the MM algorithm of Hunter (2004); ``prior`` pseudo-draws are added to every pair
    that met, so that an unbeaten agent keeps a finite strength.  Geometric mean 1.
    ``wins`` may carry leading batch dimensions (``(..., m, m)``): the fits of a bootstrap
    run together."""
    w = np.asarray(wins, dtype=np.float64).copy()
    met = (w + np.swapaxes(w, -1, -2)) > 0
    w = w + prior * met
    games = w + np.swapaxes(w, -1, -2)
    total = w.sum(axis=-1)
    p = np.ones(w.shape[:-1])
    for _ in range(iters):
        denom = (games / (p[..., :, None] + p[..., None, :])).sum(axis=-1)
        new = np.where(denom > 0, total / np.where(denom > 0, denom, 1), p)
        new = np.where(new > 0, new, 1e-12)
        new /= np.exp(np.log(new).mean(axis=-1, keepdims=True))
        if np.max(np.abs(new - p)) < tol:
            p = new
            break
        p = new
    return p


def elo_ratings(wins: np.ndarray) -> np.ndarray:
    """Elo ratings (``400 log10`` of the Bradley-Terry strengths), the first agent at 0."""
    elo = 400 * np.log10(bradley_terry(wins))
    return elo - elo[..., :1]


def elo_intervals(pairs: Sequence[PairStats], num_agents: int, seed: int,
                  resamples: int = RATING_RESAMPLES) -> np.ndarray:
    """``(num_agents, 2)``: the 95 % percentile interval of each Elo rating over ``resamples``
    bootstrap tournaments.  In each, every match's seed groups are drawn with replacement (the
    same draw for all the pairs of a three-player lineup, which share their games), so that a
    group's duplicate games stay together, as in the paired intervals."""
    rng = np.random.default_rng([seed, 0xB007])
    wins = np.zeros((resamples, num_agents, num_agents))
    by_match: dict[int, list[PairStats]] = {}
    for p in pairs:
        by_match.setdefault(p.match, []).append(p)
    for k in sorted(by_match):
        groups = len(by_match[k][0].group_score)
        draw = rng.integers(groups, size=(resamples, groups))
        for p in by_match[k]:
            score, games = p.group_score[draw].sum(axis=1), p.group_games[draw].sum(axis=1)
            wins[:, p.a, p.b] += score
            wins[:, p.b, p.a] += games - score
    elo = elo_ratings(wins)
    return np.stack([np.percentile(elo, 2.5, axis=0), np.percentile(elo, 97.5, axis=0)], axis=1)


# ---------------------------------------------------------------------- playing


@dataclass
class MatchLog:
    """Raw results of one lineup: ``games`` = groups * P games, game ``g`` belongs to group
    ``g // P`` and is played with rotation ``g % P`` (seat ``s`` holds lineup entry
    ``(s + rotation) % P``)."""

    lineup: tuple[int, ...]
    seat_agent: np.ndarray  # (games, P) agent index per seat
    group: np.ndarray  # (games,)
    seeds: np.ndarray  # (games,) uint64
    winner_seat: np.ndarray  # (games,) -1 none
    deltas: np.ndarray  # (games, deals, P)
    num_deals: np.ndarray  # (games,) deals played (the last one may be cut by the game's end)
    final_imperiales: np.ndarray
    final_points: np.ndarray


@dataclass
class AgentTiming:
    decisions: int = 0
    seconds: float = 0.0
    calls: int = 0

    @property
    def ms_per_decision(self) -> float:
        return 1000.0 * self.seconds / self.decisions if self.decisions else float("nan")


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


def _deal_winner_seat(deltas: np.ndarray) -> np.ndarray:
    """(games, deals) seat whose value grew most; -1 on a tie at the top."""
    best = deltas.max(axis=2, keepdims=True)
    top = np.isclose(deltas, best)
    return np.where(top.sum(axis=2) == 1, top.argmax(axis=2), -1)


@dataclass
class PairStats:
    a: int
    b: int
    games: int = 0
    groups: int = 0
    game_score: float = 0.0  # a's wins + half the undecided games
    game_ci_paired: tuple[float, float] = (float("nan"), float("nan"))
    game_ci_wilson: tuple[float, float] = (float("nan"), float("nan"))
    deals: int = 0
    deal_score: float = 0.0
    deal_ci_paired: tuple[float, float] = (float("nan"), float("nan"))
    margin_per_deal: float = 0.0
    margin_ci: tuple[float, float] = (float("nan"), float("nan"))
    extra: dict[str, Any] = field(default_factory=dict)
    match: int = 0  # the match (lineup) the games come from
    group_score: np.ndarray = field(default_factory=lambda: np.zeros(0))  # a's game score per seed group
    group_games: np.ndarray = field(default_factory=lambda: np.zeros(0))  # games per seed group

    @property
    def game_rate(self) -> float:
        return self.game_score / self.games if self.games else float("nan")

    @property
    def deal_rate(self) -> float:
        return self.deal_score / self.deals if self.deals else float("nan")


def pair_stats(log: MatchLog, a: int, b: int, single_deal: bool, match: int = 0) -> PairStats:
    """Agent ``a`` against agent ``b`` over the games of match number ``match`` (both must sit in it)."""
    n = len(log.seat_agent)
    seat_agent = log.seat_agent
    # Game outcomes from a's point of view.
    if single_deal:
        deal_win = _deal_winner_seat(log.deltas[:, :1])[:, 0]
        win_seat = np.where(log.winner_seat >= 0, log.winner_seat, deal_win)
    else:
        win_seat = log.winner_seat
    win_agent = np.where(win_seat >= 0, seat_agent[np.arange(n), np.maximum(win_seat, 0)], -1)
    g_score = np.where(win_agent == a, 1.0, np.where(win_agent == b, 0.0, 0.5))
    # Deals.
    dmax = log.deltas.shape[1]
    played = np.arange(dmax)[None, :] < log.num_deals[:, None]
    dws = _deal_winner_seat(log.deltas)
    dwa = np.where(dws >= 0, np.take_along_axis(seat_agent, np.maximum(dws, 0), axis=1), -1)
    d_score = np.where(dwa == a, 1.0, np.where(dwa == b, 0.0, 0.5)) * played
    in_a = (seat_agent == a).astype(float)
    in_b = (seat_agent == b).astype(float)
    val_a = (log.deltas * in_a[:, None, :]).sum(axis=2) / in_a.sum(axis=1, keepdims=True)
    val_b = (log.deltas * in_b[:, None, :]).sum(axis=2) / in_b.sum(axis=1, keepdims=True)
    margin = (val_a - val_b) * played
    groups = int(log.group.max()) + 1
    by = np.zeros((groups, 5))
    np.add.at(by, log.group, np.stack([g_score, np.ones(n), d_score.sum(1), played.sum(1), margin.sum(1)], axis=1))
    st = PairStats(a=a, b=b, games=n, groups=groups, match=match, group_score=by[:, 0], group_games=by[:, 1])
    st.game_score = float(g_score.sum())
    _, lo, hi = cluster_ratio(by[:, 0], by[:, 1])
    st.game_ci_paired = (max(lo, 0.0), min(hi, 1.0))
    st.game_ci_wilson = wilson(st.game_score, n)
    st.deals = int(played.sum())
    st.deal_score = float(d_score.sum())
    _, lo, hi = cluster_ratio(by[:, 2], by[:, 3])
    st.deal_ci_paired = (max(lo, 0.0), min(hi, 1.0))
    st.margin_per_deal, lo, hi = cluster_ratio(by[:, 4], by[:, 3])
    st.margin_ci = (lo, hi)
    st.extra = {
        "lineup": list(log.lineup),
        "mean_deals_per_game": float(log.num_deals.mean()),
        "pairs_won": int((by[:, 0] > by[:, 1] / 2).sum()),
        "pairs_split": int(np.isclose(by[:, 0], by[:, 1] / 2).sum()),
        "pairs_lost": int((by[:, 0] < by[:, 1] / 2).sum()),
    }
    return st


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

    def markdown(self) -> str:
        mode = "single deals" if self.single_deal else f"whole games to {self.rules.target_imperiales} impériales"
        why = "an agent failed" if self.stopped_by else "interrupted"
        lines = [
            f"# Tournament: {', '.join(self.names)}" + (f" (PARTIAL: {why})" if self.partial else ""),
            "",
            *([f"**Partial results.** {self.partial_note()}", ""] if self.partial else []),
            f"Rules `{self.rules.preset}` ({mode}), seed {self.seed}, {self.groups} duplicate seed groups per "
            f"lineup ({self.rules.players} games each, seats rotated), {self.seconds:.1f} s.",
            "",
        ]
        if self.single_deal:  # a game is one deal: the game columns would repeat the deal columns
            lines += ["| A | B | deals | A deal win % | 95% CI (paired) | 95% CI (Wilson) | A margin imp./deal "
                      "| 95% CI |",
                      "|---|---|---:|---:|---|---|---:|---|"]
        else:
            lines += ["| A | B | games | A game win % | 95% CI (paired) | 95% CI (Wilson) | deals | A deal win % "
                      "| 95% CI (paired) | A margin imp./deal | 95% CI |",
                      "|---|---|---:|---:|---|---|---:|---:|---|---:|---|"]

        def pct(x):
            return f"{100 * x:.1f}"

        def ci(t, f=pct):
            return f"[{f(t[0])}, {f(t[1])}]"

        def num(x):
            return f"{x:+.3f}"

        three = self.rules.players == 3
        if three:  # which lineup (agents at the three seats) each row comes from
            lines[-2] = "| lineup " + lines[-2]
            lines[-1] = "|---" + lines[-1]
        for p in self.pairs:
            lineup = f"| {' '.join(self.names[i] for i in p.extra['lineup'])} " if three else ""
            if self.single_deal:
                cells = f"{p.deals} | {pct(p.deal_rate)} | {ci(p.deal_ci_paired)} | {ci(p.game_ci_wilson)}"
            else:
                cells = (f"{p.games} | {pct(p.game_rate)} | {ci(p.game_ci_paired)} | {ci(p.game_ci_wilson)} "
                         f"| {p.deals} | {pct(p.deal_rate)} | {ci(p.deal_ci_paired)}")
            lines.append(f"{lineup}| {self.names[p.a]} | {self.names[p.b]} | {cells} "
                         f"| {num(p.margin_per_deal)} | {ci(p.margin_ci, num)} |")
        lines += ["", "| agent | Elo (Bradley-Terry) | 95% CI | ms / decision | decisions |",
                  "|---|---:|---|---:|---:|"]
        for i in np.argsort(-self.elo, kind="stable"):
            t = self.timings.get(int(i), AgentTiming())
            lo, hi = self.elo_ci[i]
            lines.append(f"| {self.names[i]} | {self.elo[i]:.0f} | [{lo:.0f}, {hi:.0f}] | {t.ms_per_decision:.3f} "
                         f"| {t.decisions} |")
        lines += [
            "",
            "Win % are A's (undecided games and tied deals count half).  Paired intervals treat each seed group "
            "(the same deals with the seats rotated) as one unit.  Elo: 400 log10 of Bradley-Terry strengths "
            f"fitted on all games, {self.names[0]} = 0; its 95% CI is the bootstrap over seed groups "
            f"({RATING_RESAMPLES} resamples), relative to {self.names[0]}.  Decision time is amortised over the "
            "batch of games the agent is asked about at once.",
            "",
        ]
        return "\n".join(lines)


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


def plot_matrix(result: TournamentResult, path: Path | io.BytesIO) -> bool:
    """The results matrix as a PNG (matplotlib, Agg) in ``path`` (a file name or a buffer);
    False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    mat = result.win_matrix()
    m = len(result.names)
    fig, ax = plt.subplots(figsize=(max(5.5, 2.0 + 1.2 * m), max(4.0, 1.4 + 1.0 * m)))
    im = ax.imshow(np.ma.masked_invalid(mat), vmin=0, vmax=1, cmap="RdBu")
    ax.set_xticks(range(m), result.names, rotation=30, ha="right")
    ax.set_yticks(range(m), result.names)
    for i in range(m):
        for j in range(m):
            if not np.isnan(mat[i, j]):
                ax.text(j, i, f"{100 * mat[i, j]:.0f}%", ha="center", va="center",
                        color="white" if abs(mat[i, j] - 0.5) > 0.3 else "black")
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent (row's game win rate)")
    mode = "single deals" if result.single_deal else "whole games"
    ax.set_title(f"{result.rules.preset}, {mode}, {result.groups} duplicate groups", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)
    return True


OUTPUT_NAMES = {"json": "results.json", "markdown": "results.md", "png": "matrix.png"}


def check_outputs(out: str | Path) -> Path:
    """Check the ``--out`` folder before a tournament: a folder that can be written or made,
    holding none of the result files (an earlier tournament's results are never overwritten).
    Raises :class:`~imperiale_env.core.inputs.InputError`."""
    out = output_dir(out, "--out folder")
    found = [name for name in OUTPUT_NAMES.values() if os.path.lexists(out / name)]
    if found:
        raise InputError(f"the --out folder {str(out)!r} already holds {', '.join(found)} (an earlier tournament's "
                         "results?); they are not overwritten: choose another --out folder, or move them away")
    return out


def write_outputs(result: TournamentResult, out: str | Path) -> dict[str, Path]:
    """``results.json``, ``results.md`` and (with matplotlib) ``matrix.png`` in ``out``.

    Nothing is overwritten: :func:`check_outputs` refuses a folder that holds them before the
    tournament, and a file that appears meanwhile keeps its content while these results go
    to a new name (``results-2.json``, ...), which the returned paths give.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": _write_new(out / OUTPUT_NAMES["json"],
                           (json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n").encode("utf-8")),
        "markdown": _write_new(out / OUTPUT_NAMES["markdown"], result.markdown().encode("utf-8")),
    }
    png = io.BytesIO()
    if plot_matrix(result, png):
        paths["png"] = _write_new(out / OUTPUT_NAMES["png"], png.getvalue())
    return paths


def _write_new(path: Path, data: bytes) -> Path:
    """Write ``data`` atomically to ``path``, or to ``stem-2.suffix``, ``stem-3.suffix``, ... if it exists."""
    from imperiale_env.core.atomic import write_atomic

    target, n = path, 1
    while True:
        try:
            return write_atomic(target, data, overwrite=False, what="tournament result")
        except FileExistsError:
            n += 1
            target = path.with_name(f"{path.stem}-{n}{path.suffix}")
