"""The statistics of a duplicate-deal tournament: what each match's games say about two agents.

A match's raw results (:class:`MatchLog`) become, for each pair of agents in it, game and deal win
rates with paired intervals over seed groups and the impériale margin per deal (:func:`pair_stats`);
every pair of a tournament becomes Elo ratings from a Bradley-Terry fit, with bootstrap intervals
over seed groups (:func:`elo_intervals`).  The duplicate design and why the intervals are paired
are told in :mod:`imperiale_agents.tournament.match`, which plays the matches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from imperiale_env.core.events import value_table as event_value_table
from imperiale_env.core.rules import Rules

Z95 = 1.959963984540054
RATING_RESAMPLES = 1000
"""Bootstrap resamples of the seed groups behind each rating interval (all fitted at once, in
well under a second for a ladder of ten agents)."""


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


# ---------------------------------------------------------------------- pairs


def deal_shares(deltas: np.ndarray) -> np.ndarray:
    """``(games, deals, seats)``: each seat's share of each deal, the deal split equally among the
    seats whose value grew most (1 to a lone winner, 1/2 to each of two tied, 1/3 to each of three)."""
    top = np.isclose(deltas, deltas.max(axis=2, keepdims=True))
    return top / top.sum(axis=2, keepdims=True)


def pair_score(shares: np.ndarray, in_a: np.ndarray, in_b: np.ndarray) -> np.ndarray:
    """A's score against B in each deal, from the seats' shares (:func:`deal_shares`) and which seats
    each holds (``(games, seats)``): ``1/2 + (A's shares - B's shares) / 2``.  With only A and B at
    the table that is A's share: 1 for a deal won, 1/2 for a tie between them, and 1 for a tie
    between two of A's own seats (the deal is A's either way), so that equal players score
    exactly their seats' share (2/3 with two seats of three).  A deal won by a third agent is 1/2."""
    a = (shares * in_a[:, None, :]).sum(axis=2)
    b = (shares * in_b[:, None, :]).sum(axis=2)
    return 0.5 + (a - b) / 2


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
    in_a = (seat_agent == a).astype(float)
    in_b = (seat_agent == b).astype(float)
    # Deals: a tie at the top splits the deal among the tied seats.
    dmax = log.deltas.shape[1]
    played = np.arange(dmax)[None, :] < log.num_deals[:, None]
    deal_score = pair_score(deal_shares(log.deltas), in_a, in_b)
    d_score = deal_score * played
    # Game outcomes from a's point of view: the game's winner, or (single deals, nobody at the
    # target) the deal's score.
    win_agent = np.where(log.winner_seat >= 0, seat_agent[np.arange(n), np.maximum(log.winner_seat, 0)], -1)
    g_score = np.where(win_agent == a, 1.0, np.where(win_agent == b, 0.0, 0.5))
    if single_deal:
        g_score = np.where(log.winner_seat >= 0, g_score, deal_score[:, 0])
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
