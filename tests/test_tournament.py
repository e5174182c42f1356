"""The tournament: duplicate seatings, deal accounting, statistics, determinism, outputs, CLI."""

from __future__ import annotations

import json

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_agents.tournament.match import lineups, play_match, run_tournament, seatings
from imperiale_agents.tournament.report import write_outputs
from imperiale_agents.tournament.stats import (
    MatchLog,
    PairStats,
    bradley_terry,
    cluster_ratio,
    elo_intervals,
    elo_ratings,
    pair_stats,
    wilson,
)
from imperiale_cli.cli import main
from imperiale_env.core.rules import make_rules


class FirstLegal:
    """A deterministic agent: the lowest legal action id."""

    name = "first"

    def act(self, obs, mask, rng):
        return np.argmax(mask, axis=1).astype(np.int64)


def test_seatings_and_lineups():
    assert seatings((0, 1), 2) == [(0, 1), (1, 0)]
    assert seatings((0, 1, 2), 3) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert lineups(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert lineups(2, 3) == [(0, 0, 1), (0, 1, 1)]
    assert lineups(4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]


def test_duplicate_pairs_share_the_seed_and_mirror_the_seats():
    rules = make_rules("academie", target_imperiales=2)
    log = play_match(rules, [HeuristicAgent(rules), FirstLegal()], (0, 1), 12, seed=5, match_index=0)
    assert len(log.seeds) == 24
    assert (log.seeds[0::2] == log.seeds[1::2]).all()
    assert len(set(log.seeds[0::2].tolist())) == 12
    assert (log.seat_agent[0::2] == [0, 1]).all() and (log.seat_agent[1::2] == [1, 0]).all()
    # Deal accounting: the per-deal changes add up to the final score of every game.
    value = log.final_imperiales + log.final_points / 24
    assert np.allclose(log.deltas.sum(axis=1), value)


def test_same_deterministic_agent_gives_mirrored_results():
    rules = make_rules("academie", target_imperiales=2)
    a, b = HeuristicAgent(rules), HeuristicAgent(rules)
    log = play_match(rules, [a, b], (0, 1), 10, seed=2, match_index=0)
    # Same cards, same seats' play: the two games of a pair are the same game.
    assert (log.winner_seat[0::2] == log.winner_seat[1::2]).all()
    assert np.allclose(log.deltas[0::2], log.deltas[1::2])
    result = run_tournament([a, b], rules, groups=10, seed=2)
    pair = result.pairs[0]
    assert pair.game_rate == 0.5 and pair.deal_rate == 0.5 and pair.margin_per_deal == 0
    assert result.names == ["heuristic", "heuristic#2"]


def test_swapping_the_agents_swaps_the_results():
    rules = make_rules("academie", target_imperiales=2)
    one = run_tournament([HeuristicAgent(rules), FirstLegal()], rules, groups=15, seed=4)
    two = run_tournament([FirstLegal(), HeuristicAgent(rules)], rules, groups=15, seed=4)
    p, q = one.pairs[0], two.pairs[0]
    assert p.game_score == pytest.approx(q.games - q.game_score)
    assert p.deal_score == pytest.approx(q.deals - q.deal_score)
    assert p.margin_per_deal == pytest.approx(-q.margin_per_deal)


def _strip(d: dict) -> dict:
    d = dict(d)
    d.pop("seconds")
    d.pop("decision_time_ms")
    return d


def test_deterministic_for_a_seed():
    r1 = run_tournament(["random", "heuristic"], "academie", groups=20, seed=9)
    r2 = run_tournament(["random", "heuristic"], "academie", groups=20, seed=9)
    r3 = run_tournament(["random", "heuristic"], "academie", groups=20, seed=10)
    assert _strip(r1.to_dict()) == _strip(r2.to_dict())
    assert _strip(r1.to_dict()) != _strip(r3.to_dict())


def test_three_players_rotate_the_seats():
    rules = make_rules("academie3", target_imperiales=2)
    result = run_tournament(["random", "heuristic"], rules, groups=6, seed=1)
    assert len(result.pairs) == 2
    for log in result.logs:
        assert (log.seeds[0::3] == log.seeds[1::3]).all() and (log.seeds[0::3] == log.seeds[2::3]).all()
        assert np.allclose(log.deltas.sum(axis=1), log.final_imperiales + log.final_points / 24)
        for g in range(0, len(log.seeds), 3):
            rows = log.seat_agent[g : g + 3]
            for s in range(3):  # every lineup entry sits at every seat once
                assert sorted(rows[:, s].tolist()) == sorted(log.lineup)


def _log(seat_agent, deltas, winner=None):
    seat_agent, deltas = np.asarray(seat_agent), np.asarray(deltas, dtype=float)[:, None, :]
    n = len(seat_agent)
    return MatchLog(lineup=tuple(seat_agent[0]), seat_agent=seat_agent, group=np.arange(n) // 3,
                    seeds=np.zeros(n, dtype=np.uint64), winner_seat=np.full(n, -1) if winner is None else winner,
                    deltas=deltas, num_deals=np.ones(n, dtype=np.int64), final_imperiales=np.zeros((n, 3)),
                    final_points=np.zeros((n, 3)))


def test_a_tied_deal_is_split_among_the_tied_seats():
    """Three players: a tie between two seats of one agent is that agent's deal; a tie across the
    agents is split by seats; a deal won by a third agent is half to each of the other two."""
    log = _log([[0, 0, 1]] * 6, [[1, 1, 0],     # A's two seats tie: A's deal
                                 [1, 0, 1],     # A and B tie: half
                                 [1, 1, 1],     # all three: A holds two shares of three
                                 [0, 0, 2],     # B alone
                                 [2, 0, 0],     # A alone
                                 [0, 1, 1]])    # A and B tie again
    a = pair_stats(log, 0, 1, single_deal=True)
    assert a.deal_score == pytest.approx(1 + 0.5 + 2 / 3 + 0 + 1 + 0.5)
    assert a.game_score == pytest.approx(a.deal_score)  # single deals: the game is the deal
    assert pair_stats(log, 1, 0, single_deal=True).deal_score == pytest.approx(6 - a.deal_score)
    trio = _log([[0, 1, 2]] * 3, [[1, 0, 1], [0, 0, 1], [1, 1, 0]])  # A ties C, C alone, A ties B
    assert pair_stats(trio, 0, 1, single_deal=True).deal_score == pytest.approx(0.75 + 0.5 + 0.5)


@settings(max_examples=200, deadline=None)
@given(outcomes=hnp.arrays(np.int8, (12, 3), elements=st.integers(0, 2)))
def test_equal_shares_make_the_seats_par(outcomes):
    """Over the three rotations of a deal, A's two seats score exactly 2 of 3 deals, whatever ties."""
    rows = np.repeat(outcomes, 3, axis=0).astype(float)
    for r in range(3):  # the same deal outcome by seat, A sitting at every pair of seats once
        rows[r::3] = np.roll(rows[r::3], r, axis=1)
    seat_agent = np.tile([0, 0, 1], (len(rows), 1))
    score = pair_stats(_log(seat_agent, rows), 0, 1, single_deal=True).deal_score
    assert score == pytest.approx(2 / 3 * len(rows))


def test_statistics():
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert wilson(0, 10)[0] == 0.0
    r, lo, hi = cluster_ratio(np.array([1.0, 0.5, 1.0, 0.0]), np.ones(4))
    assert r == pytest.approx(0.625) and lo < r < hi
    # Bradley-Terry recovers strengths 1 : 2 : 4 from expected win counts.
    s = np.array([1.0, 2.0, 4.0])
    wins = 1000 * s[:, None] / (s[:, None] + s[None, :])
    np.fill_diagonal(wins, 0)
    p = bradley_terry(wins, prior=0.0)
    assert p / p[0] == pytest.approx(s, rel=1e-4)
    assert np.isfinite(bradley_terry(np.array([[0, 10.0], [0, 0]]))).all()


def test_rating_intervals_bootstrap_the_seed_groups():
    # Batched fits (the bootstrap's) give what one fit at a time gives.
    rng = np.random.default_rng(0)
    stack = rng.integers(0, 20, size=(5, 4, 4)).astype(float)
    stack[:, np.arange(4), np.arange(4)] = 0
    assert bradley_terry(stack) == pytest.approx(np.stack([bradley_terry(w) for w in stack]), rel=1e-8)
    # Agent 1 beats agent 0 in 70 of 100 games (50 groups of 2), agent 2 beats both about evenly.
    score = np.repeat([0.0, 1.0, 0.5], [10, 20, 20])  # agent 0's score per group, 2 games each
    pairs = [PairStats(a=0, b=1, match=0, group_score=score, group_games=np.full(50, 2.0)),
             PairStats(a=0, b=2, match=1, group_score=rng.permutation(score), group_games=np.full(50, 2.0)),
             PairStats(a=1, b=2, match=2, group_score=np.full(50, 1.0), group_games=np.full(50, 2.0))]
    wins = np.zeros((3, 3))
    for p in pairs:
        wins[p.a, p.b] += p.group_score.sum()
        wins[p.b, p.a] += p.group_games.sum() - p.group_score.sum()
    elo = elo_ratings(wins)
    ci = elo_intervals(pairs, 3, seed=4)
    assert ci[0].tolist() == [0.0, 0.0]  # the anchor
    assert (ci[1:, 0] < elo[1:]).all() and (elo[1:] < ci[1:, 1]).all()
    assert 20 < ci[1, 1] - ci[1, 0] < 300  # tens of Elo from 100 games a pairing, not a point, not the whole line
    assert (elo_intervals(pairs, 3, seed=4) == ci).all()  # deterministic for the tournament seed
    # Twice the groups, the same rates: narrower intervals.
    twice = [PairStats(a=p.a, b=p.b, match=p.match, group_score=np.tile(p.group_score, 2),
                       group_games=np.tile(p.group_games, 2)) for p in pairs]
    assert (np.diff(elo_intervals(twice, 3, seed=4)[1:], axis=1) < np.diff(ci[1:], axis=1)).all()


def test_outputs_and_cli(tmp_path, capsys):
    result = run_tournament(["random", "heuristic"], "academie", groups=5, seed=1, single_deal=True)
    paths = write_outputs(result, tmp_path / "a")
    data = json.loads(paths["json"].read_text())
    assert data["mode"] == "single_deal" and data["pairings"][0]["games"] == 10
    table = paths["markdown"].read_text()
    assert "| random | heuristic | 10 |" in table
    # a single deal is a game: the table has the deal columns only, each said once
    header = next(line for line in table.splitlines() if line.startswith("| A | B |"))
    assert "game win" not in header and "games" not in header and header.count("deals") == 1
    out = tmp_path / "cli"
    assert main(["eval", "--agents", "random,heuristic", "--games", "3", "--seed", "2", "--target", "2",
                 "--out", str(out), "--no-progress"]) == 0
    data = json.loads((out / "results.json").read_text())
    assert data["mode"] == "whole_games" and data["target_imperiales"] == 2
    assert data["pairings"][0]["games"] == 6
    assert {r["agent"] for r in data["ratings"]} == {"random", "heuristic"}
    for r in data["ratings"]:
        low, high = r["elo_ci95"]
        assert low <= r["elo"] <= high
    assert "| agent | Elo (Bradley-Terry) | 95% CI | ms / decision | decisions |" in (out / "results.md").read_text()
    assert "| A | B | games | A game win % |" in (out / "results.md").read_text()
    assert "Tournament" in capsys.readouterr().out
    assert main(["eval", "--agents", "random,heuristic", "--games", "2", "--deals", "2"]) == 2
    assert main(["eval", "--agents", "random,nobody", "--games", "2", "--no-progress"]) == 2
    assert main(["eval", "--agents", "random", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert "imperiale eval: error" in err and "nobody" in err
