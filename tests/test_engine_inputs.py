"""Issue 10, engine items: the batch size checked, nothing before reset(), and the turned-card
impériale shown with the dealer's three cards it completes, in both engines and the observation."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_env.batch import BatchGame
from imperiale_env.core import actions as act
from imperiale_env.core.cards import card_code
from imperiale_env.core.observation import OFFSETS
from imperiale_env.core.rules import make_rules
from imperiale_env.reference.game import Game
from imperiale_env.reference.observe import observe


@pytest.mark.parametrize("bad", [2.5, 0, -3, True, 10**12, "4", None])
def test_a_bad_number_of_games_is_refused(bad):
    with pytest.raises(ValueError, match="num_games must be"):
        BatchGame("academie", bad)


def test_numpy_integers_are_a_number_of_games():
    assert BatchGame("academie", np.int64(3)).n == 3


@pytest.mark.parametrize("call", ["observe", "legal_action_mask", "step"])
def test_nothing_before_reset(call):
    game = BatchGame("foster", 2)
    args = ([act.SINK, act.SINK],) if call == "step" else ()
    with pytest.raises(RuntimeError, match=r"call reset\(seed\) before"):
        getattr(game, call)(*args)


def _turned_question(rules, seeds=range(2000)) -> tuple[int, Game]:
    """A seed whose first deal asks the dealer about the turned-card impériale, and the
    reference game stopped at that question (everything before it hidden or sunk)."""
    for seed in seeds:
        game = Game(rules, seed=seed)
        while game.decision is not None and game.state.index == 0:
            d = game.decision
            if d.kind == "question" and d.question.kind == "turned_imperiale":
                return seed, game
            game.step(act.HIDE if d.kind == "question" else act.SINK if d.kind == "point" else d.legal[0])
    raise AssertionError("no seed with a turned-card impériale question")


@pytest.mark.parametrize("preset", ["foster", "imperijal"])
def test_showing_the_turned_imperiale_reveals_the_three_cards_it_completes(preset):
    rules = make_rules(preset)
    seed, game = _turned_question(rules)
    dealer = game.current_player
    opponent = 1 - dealer
    taken = [a for _, a in game.state.actions]
    batch = BatchGame(rules, 1)
    batch.reset(np.array([seed], dtype=np.uint64))
    for a in taken:
        batch.step([a])
    before = observe(game, opponent)[OFFSETS["shown_by"]] == 2  # the dealer is seat 1 for him
    game.step(act.SHOW)
    batch.step([act.SHOW])
    after = observe(game, opponent)[OFFSETS["shown_by"]] == 2
    new = {int(c) for c in np.flatnonzero(after & ~before)}
    turned = game.state.deal.turned
    assert len(new) == 3 and new <= game.state.deal.hands[dealer] and turned not in new
    assert all(c // 9 == turned // 9 for c in new) or all(c % 9 == turned % 9 for c in new), [
        card_code(c) for c in new]
    # The batched engine shows the same cards, and its observation says so.
    assert int(batch.revealed[0, dealer]) & sum(1 << c for c in new) == sum(1 << c for c in new)
    mine = batch.observe(players=np.array([opponent]))[0]
    assert np.array_equal(mine, observe(game, opponent))


def test_hiding_it_reveals_nothing():
    rules = make_rules("foster")
    _, game = _turned_question(rules)
    dealer = game.current_player
    before = set(game.state.revealed[dealer])
    game.step(act.HIDE)
    assert set(game.state.revealed[dealer]) == before
