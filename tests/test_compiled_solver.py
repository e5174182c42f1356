"""The compiled rule kernels and the compiled solver against their pure-Python oracles.

The kernels are checked against the Python solver's bitmask rules (themselves checked against
the engine in test_solver.py) and the plain set-based reference; the compiled solver's values
against the pure-Python solver's on positions of random play in every preset, two and three
players, at and inside tricks, from 1 to 12 tricks left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_solver import ref_winner, to_mask

from imperiale_agents.search.compiled_solver import CompiledSolver, Positions, equivalent_heads, solve_positions
from imperiale_agents.search.solver import Solver
from imperiale_cli.devtools.bench_solver import random_play_positions
from imperiale_cli.devtools.differential import random_legal
from imperiale_env.batch import BatchGame
from imperiale_env.core.cards import NUM_CARDS, deck
from imperiale_env.core.rules import make_rules
from imperiale_env.kernels import card_count, legal_plays, lowest_card, trick_honours, trick_winner

PRESETS = ["academie", "academie3", "foster", "imperijal"]
ROOT = Path(__file__).resolve().parents[1]


def engine_positions(preset: str, games: int, seed: int) -> dict[int, list[tuple]]:
    """Play decisions of random games, by tricks left (the current one included): each
    ``(trump, hands, leader, trick, tricks, played, seat to play)`` from the engine's state (the
    bench's positions, without their observation and mask)."""
    rules = make_rules(preset)
    out = {left: [pos[:7] for pos in positions]
           for left, positions in random_play_positions(rules, games, seed).items()}
    assert all(len(pos[1]) == rules.players for pos in out[12])
    return out


def python_values(rules, pos) -> dict[int, float]:
    trump, hands, leader, trick, tricks, played, me = pos
    return Solver(rules, trump, me=me).move_values(hands, leader, trick, tricks, played)


def compiled_values(rules, pos) -> dict[int, float]:
    trump, hands, leader, trick, tricks, played, me = pos
    return CompiledSolver(rules, trump, me=me).move_values(hands, leader, trick, tricks, played)


# ---------------------------------------------------------------------- the kernels


@pytest.mark.parametrize("preset", PRESETS)
def test_legal_plays_kernel_matches_the_python_rules(preset):
    rules = make_rules(preset)
    rng = np.random.default_rng(4)
    cards = np.array(deck(rules.players))
    checked = 0
    for _ in range(3000):
        trump = int(rng.integers(4))
        solver = Solver(rules, trump)
        order = rng.permutation(cards)
        hand = to_mask(order[: int(rng.integers(1, 13))])
        trick = tuple(int(c) for c in order[20 : 20 + int(rng.integers(0, rules.players))])
        win = trick[ref_winner(list(trick), trump)[0]] if trick else 0
        first = bool(rng.integers(2))
        expected = solver.legal(hand, trick, win, first)
        led = trick[0] // 9 if trick else -1
        got = legal_plays(np.uint64(hand), led, win, trump, first, rules.must_beat, rules.must_trump,
                          rules.overtrump, rules.first_lead_trump)
        assert int(got) == expected, (preset, hand, trick, trump, first)
        checked += bool(trick)
    assert checked > 1000


def test_trick_and_count_kernels():
    rng = np.random.default_rng(2)
    for _ in range(2000):
        n = int(rng.integers(1, 4))
        trick = rng.permutation(36)[:n].astype(np.int64)
        trump = int(rng.integers(4))
        assert trick_winner(trick, n, trump) == ref_winner([int(c) for c in trick], trump)[0]
        honours = np.uint64(to_mask(rng.permutation(36)[:5]))
        assert trick_honours(trick, n, honours) == bin(to_mask(trick) & int(honours)).count("1")
        mask = to_mask(rng.permutation(36)[: int(rng.integers(1, 37))])
        assert card_count(np.uint64(mask)) == bin(mask).count("1")
        assert lowest_card(np.uint64(mask)) == (mask & -mask).bit_length() - 1


def test_equivalent_heads_are_the_python_solvers():
    rules = make_rules("academie3")
    rng = np.random.default_rng(6)
    for _ in range(1000):
        trump = int(rng.integers(4))
        solver = Solver(rules, trump)
        order = rng.permutation(36)
        mine, others = to_mask(order[:9]), to_mask(order[9 : 9 + int(rng.integers(0, 20))])
        got = equivalent_heads(np.uint64(mine), np.uint64(others), np.uint64(solver.honours), np.uint64(mine))
        assert int(got) == solver._reps(mine, others)


# ---------------------------------------------------------------------- the solver


@pytest.mark.parametrize("preset", PRESETS)
def test_compiled_solver_equals_python_solver(preset):
    """Thousands of small positions, some deep ones, a full deal with two players."""
    rules = make_rules(preset)
    two = rules.players == 2
    positions = engine_positions(preset, 48 if two else 32, seed=17)
    rng = np.random.default_rng(1)
    budget = {1: 200, 2: 200, 3: 150, 4: 80, 5: 30, 6: 8, 7: 4, 8: 2} if two else \
        {1: 150, 2: 150, 3: 60, 4: 12, 5: 3, 6: 1}
    if two:
        budget.update({10: 1, 12: 1})
    compared = mid_trick = 0
    for left, count in budget.items():
        pool = positions[left]
        for k in rng.permutation(len(pool))[:count]:
            pos = pool[k]
            expected = python_values(rules, pos)
            got = compiled_values(rules, pos)
            assert got == expected, (preset, left, pos)
            compared += 1
            mid_trick += bool(pos[3])
    assert compared > (650 if two else 350) and mid_trick > 100


@pytest.mark.parametrize("preset", ["academie", "academie3", "foster"])
def test_a_trick_prize_reaches_both_solvers(monkeypatch, preset):
    """Both solvers read the scoring from PlayOutScoring alone: a prize for winning a trick (no preset
    has one; a rule option would set it there) moves both solvers' values alike, and on the last trick
    by exactly the prize for its winner."""
    import imperiale_agents.search.compiled_solver as compiled
    import imperiale_agents.search.solver as python_solver
    from imperiale_env.core.tricks import play_out_scoring

    rules = make_rules(preset)
    positions = engine_positions(preset, 12, seed=5)
    plain = {left: [python_values(rules, pos) for pos in positions[left][:20]] for left in (1, 2, 3)}
    base = play_out_scoring(rules)
    prize = np.arange(1.0, 13.0) * 2  # a different prize for each trick
    prized = base._replace(trick_prize=prize)
    for module in (compiled, python_solver):
        monkeypatch.setattr(module, "play_out_scoring", lambda r: prized)
    compiled._rule_tables.cache_clear()
    share = 1.0 if rules.players == 2 else 0.5
    changed = 0
    try:
        for left in (1, 2, 3):
            for pos, before in zip(positions[left][:20], plain[left], strict=True):
                after = python_values(rules, pos)
                assert compiled_values(rules, pos) == after, (left, pos)
                changed += after != before
                if left == 1:  # one card left in each hand: the trick's winner takes the last prize
                    trump, hands, leader, trick, me = pos[0], pos[1], pos[2], list(pos[3]), pos[6]
                    rest = [int(hands[(leader + j) % rules.players]).bit_length() - 1
                            for j in range(len(trick), rules.players)]
                    winner = (leader + ref_winner(trick + rest, trump)[0]) % rules.players
                    gain = prize[11] if winner == me else -share * prize[11]
                    assert {c: v - before[c] for c, v in after.items()} == {c: gain for c in after}, pos
    finally:
        compiled._rule_tables.cache_clear()
    assert changed > 40


def test_capot_and_values_with_tricks_already_won():
    rules = make_rules("academie")
    hands = (to_mask([0, 1]), to_mask([14, 15]))
    vals = CompiledSolver(rules, trump=0, me=0).move_values(hands, 0, (), (10, 0), 10)
    assert vals == Solver(rules, trump=0, me=0).move_values(hands, 0, (), (10, 0), 10)
    assert all(v == 48.0 + 8.0 for v in vals.values())


def test_many_worlds_at_once_and_threads_agree():
    rules = make_rules("academie")
    pool = engine_positions("academie", 24, seed=3)[7]
    trump, hands, leader, trick, tricks, played, me = pool[0]
    # Other deals of the same position: the other seat's cards drawn from every card I cannot see.
    rng = np.random.default_rng(0)
    other = 1 - me
    unseen = [c for c in deck(2) if not ((hands[me] | to_mask(trick)) >> c) & 1]
    assert len(unseen) > bin(hands[other]).count("1")
    worlds = []
    for _ in range(12):
        w = [0, 0]
        w[me] = hands[me]
        w[other] = to_mask(rng.permutation(unseen)[: bin(hands[other]).count("1")])
        worlds.append(w)
    solver = CompiledSolver(rules, trump, me=me)
    one = solver.values(np.array(worlds, dtype=np.uint64), leader, trick, tricks, played, threads=1)
    for w, row in zip(worlds, one, strict=True):
        expected = Solver(rules, trump, me=me).move_values(tuple(w), leader, trick, tricks, played)
        assert {int(c): float(row[c]) for c in np.flatnonzero(~np.isnan(row))} == expected
    import numba

    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    two = solver.values(np.array(worlds, dtype=np.uint64), leader, trick, tricks, played, threads=threads)
    assert np.array_equal(one, two, equal_nan=True)


@pytest.mark.parametrize("preset", ["academie", "academie3"])
def test_one_call_for_many_different_positions(preset):
    """solve_positions: positions of different deals, trumps, seats, leaders, tricks and trick
    states in one call, each equal to the Python solver's values, at any thread count."""
    import numba

    rules = make_rules(preset)
    positions = engine_positions(preset, 16, seed=23)
    rng = np.random.default_rng(8)
    rows = [positions[left][k] for left in (1, 2, 3, 4, 5) for k in rng.permutation(len(positions[left]))[:40]]
    P = rules.players
    assert {r[0] for r in rows} == set(range(4)) and {r[6] for r in rows} == set(range(P))
    assert {len(r[3]) for r in rows} == set(range(P)) and len({r[5] for r in rows}) == 5
    batch = Positions.of(rows)
    one = solve_positions(rules, batch)
    for row, values in zip(rows, one, strict=True):
        got = {int(c): float(values[c]) for c in np.flatnonzero(~np.isnan(values))}
        assert got == python_values(rules, row), row
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    assert np.array_equal(one, solve_positions(rules, batch, threads=threads), equal_nan=True)
    assert solve_positions(rules, Positions.of([])).shape == (0, NUM_CARDS)


@pytest.mark.parametrize("preset", ["academie", "academie3"])
def test_values_for_a_seat_that_is_not_to_play(preset):
    """``me`` need not be the seat to play: its values of that seat's cards, equal to the Python
    solver's; with two players the exact negation of the player's own values."""
    rules = make_rules(preset)
    P = rules.players
    positions = engine_positions(preset, 16, seed=29)
    rng = np.random.default_rng(9)
    rows = [positions[left][k] for left in (1, 2, 3, 4) for k in rng.permutation(len(positions[left]))[:25]]
    other = [(*row[:6], (row[6] + 1 + k % (P - 1)) % P) for k, row in enumerate(rows)]
    theirs = solve_positions(rules, Positions.of(other))
    for row, values in zip(other, theirs, strict=True):
        assert {int(c): float(values[c]) for c in np.flatnonzero(~np.isnan(values))} == python_values(rules, row)
    if P == 2:
        own = solve_positions(rules, Positions.of(rows))
        assert np.array_equal(theirs, -own, equal_nan=True)


def test_solve_positions_names_the_bad_row():
    rules = make_rules("academie")
    good = (0, (to_mask([0, 1]), to_mask([14, 15])), 0, (), (5, 5), 10, 0)
    for bad, message in [((4, *good[1:]), "row 1: trump must be a suit index"),
                         ((*good[:6], 2), "row 1: me must be a seat 0..1"),
                         ((*good[:4], (5, 4), 10, 0), "row 1: inconsistent position"),
                         ((*good[:3], (14, 15), *good[4:]), "row 1: inconsistent position")]:
        with pytest.raises(ValueError, match=message):
            solve_positions(rules, Positions.of([good, bad]))
    with pytest.raises(ValueError, match=r"hands must have shape \(1, 2\)"):
        solve_positions(rules, Positions(*(np.asarray(a)[:, :1] if k == 0 else a
                                           for k, a in enumerate(Positions.of([good])))))


def test_compiled_solver_refuses_bad_input():
    rules = make_rules("academie")
    with pytest.raises(ValueError, match="trump"):
        CompiledSolver(rules, trump=4)
    solver = CompiledSolver(rules, trump=0, me=0)
    with pytest.raises(ValueError, match="tricks won"):
        solver.move_values((1, 2), 0, (), (3, 0), 2)
    with pytest.raises(ValueError, match="threads"):
        solver.values(np.zeros((1, 2), dtype=np.uint64), 0, (), (0, 0), 0, threads=0)


def test_runs_with_jit_disabled():
    """NUMBA_DISABLE_JIT=1 (for debugging) runs the same code as Python, with the same values."""
    code = (
        "from imperiale_agents.search.compiled_solver import CompiledSolver\n"
        "from imperiale_agents.search.solver import Solver\n"
        "from imperiale_env.core.rules import make_rules\n"
        "for preset in ('academie', 'academie3'):\n"
        "    r = make_rules(preset)\n"
        "    P = r.players\n"
        "    hands = (0b100000000010000000001, (1 << 1) | (1 << 11) | (1 << 30), (1 << 2) | (1 << 12) | (1 << 29))\n"
        "    args = (hands[:P], 0, (), (3,) * P if P == 3 else (9, 0), 12 - 3)\n"
        "    a = CompiledSolver(r, 1).move_values(*args)\n"
        "    assert a == Solver(r, 1).move_values(*args), (a,)\n"
        "print('ok')\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@pytest.mark.parametrize("preset", ["academie", "academie3"])
def test_pimc_chooses_the_same_cards_with_either_solver_and_any_thread_count(preset):
    from imperiale_agents.observation_view import decode
    from imperiale_agents.search.pimc import PIMCAgent

    rules = make_rules(preset)
    agents = [PIMCAgent(rules, samples=4), PIMCAgent(rules, samples=4, solver="python"),
              PIMCAgent(rules, samples=4, threads=2)]
    bg = BatchGame(rules, 12)
    bg.reset(5)
    rng = np.random.default_rng(5)
    decided = 0
    while not bg.done.all():
        obs, mask = bg.observe(), bg.legal_action_mask()
        v = decode(obs)
        rows = np.flatnonzero(~bg.done & (v.phase == 2) & (v.tricks_played >= (7 if rules.players == 2 else 9)))
        if len(rows):
            chosen = [a.act(obs[rows], mask[rows], np.random.default_rng(2)) for a in agents]
            assert np.array_equal(chosen[0], chosen[1]) and np.array_equal(chosen[0], chosen[2])
            assert mask[rows, chosen[0]].all()
            decided += len(rows)
            if decided > 60:
                break
        bg.step(random_legal(rng, mask))
    assert decided > 60


def test_pimc_refuses_unknown_solver():
    from imperiale_agents.search.pimc import PIMCAgent

    with pytest.raises(ValueError, match="allowed: compiled, python"):
        PIMCAgent("academie", solver="fast")
