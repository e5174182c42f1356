"""Consistency check of the exact solver against the reference engine, in the manner of OpenSpiel's
consistency tests: what the solver says a position is worth is what the engine scores when the
solver's line is played.

From a seeded deal played at random to ``tricks_left`` tricks from its end, the solver values the
position for a seat ``me`` (:func:`~imperiale_agents.analysis.record_analysis.playout_value`); then the rest of the
deal is played on the reference engine by the solver's own choices, ``me`` taking the card of
highest value and every other seat the one of lowest value for ``me`` (the minimax, paranoid with
three players, that the value assumes).  The engine's score events from there on (honours
captured, the trick score, a capot as 24 points an impériale: every kind but those in
:data:`OUTSIDE`), less the honours already captured when the position was valued, give each seat's
points; ``me``'s less the others' mean must equal the solver's value exactly, under every rules
field (the solvers read the rules' scoring from ``core.tricks.play_out_scoring``; a field it ignored
would show here).  Fallen impériales, wipes and the target are outside the solver's value by design
(:mod:`imperiale_agents.search.solver`) and not counted.  The compiled solver is held to
the Python one by ``tests/test_compiled_solver.py``.  Used by ``tests/test_solver.py`` (every rule
variant) and ``benchmarks/solver_check.py`` (many seeds).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from imperiale_agents.analysis.record_analysis import card_mask, playout_value
from imperiale_agents.search.solver import Solver
from imperiale_env.core.declarations import POINTS_PER_CAPTURED_HONOUR, honour_cards
from imperiale_env.core.events import FALLEN_IMPERIALE, GAME_OVER, IMPERIALE, POINTS_PER_IMPERIALE, WIPE
from imperiale_env.core.rules import Rules
from imperiale_env.reference.game import DealState, Game

OUTSIDE = (FALLEN_IMPERIALE, WIPE, IMPERIALE, GAME_OVER)
"""The score events after the play that the solver's value leaves out by design; every other one
counts, so an event kind a new rule adds is checked against the solvers with no edit here."""


class SolverDisagreement(AssertionError):
    """The solver's value and the engine's score differ; the message names the rules, seed and seat."""


def _position(state: DealState) -> tuple[tuple[int, ...], int, tuple[int, ...], tuple[int, ...], int]:
    return (tuple(card_mask(h) for h in state.hands), state.leader, tuple(c for _, c in state.trick),
            tuple(state.tricks), state.tricks_played)


def after_play_points(state: DealState, since: int) -> list[float]:
    """Each seat's points from the deal's after-play events logged after event ``since``."""
    points = [0.0] * len(state.hands)
    for e in state.events[since:]:
        if e["event"] not in OUTSIDE and not e.get("in_hand"):
            points[e["player"]] += e.get("points", 0) + POINTS_PER_IMPERIALE * e.get("imperiales", 0)
    return points


def check_position(rules: Rules, seed: int, tricks_left: int) -> float | None:
    """Play seed ``seed`` at random to ``tricks_left`` tricks from the end (at a trick's start), value
    it with the solver for a seat drawn from the seed, play it out by the solver's choices and compare;
    the value checked, or None when the deal ended before (a carte blanche).  Raises
    :class:`SolverDisagreement`."""
    # a target that the one deal cannot reach: the engine then scores every after-play event
    rules = dataclasses.replace(rules, target_imperiales=max(rules.target_imperiales, 5))
    game = Game(rules, seed=seed, single_deal=True)
    rng = np.random.default_rng(seed)
    while game.decision is not None and not (game.decision.kind == "play" and not game.state.trick
                                             and game.state.tricks_played >= 12 - tricks_left):
        game.step(int(rng.choice(game.decision.legal)))
    if game.decision is None:
        return None
    state = game.state
    trump, me, P = state.deal.trump, int(rng.integers(rules.players)), rules.players
    honours = honour_cards(rules, trump)
    before = [POINTS_PER_CAPTURED_HONOUR * len(honours & state.captured[p]) for p in range(P)]
    since = len(state.events)
    value = playout_value(rules, trump, *_position(state), me)
    solver = Solver(rules, trump, me=me)
    while game.decision is not None:
        values = solver.move_values(*_position(game.state))
        choose = max if game.decision.player == me else min
        game.step(choose(values, key=values.get))
    points = [x - b for x, b in zip(after_play_points(game.history[-1], since), before, strict=True)]
    scored = points[me] - sum(points[q] for q in range(P) if q != me) / (P - 1)
    if abs(scored - value) > 1e-9:
        raise SolverDisagreement(f"{rules.preset} {rules}: seed {seed}, seat {me}, {tricks_left} tricks left: the "
                                 f"solver values the position {value:+.3f}, the engine scores its line {scored:+.3f}")
    return value


__all__ = ["OUTSIDE", "SolverDisagreement", "after_play_points", "check_position"]
