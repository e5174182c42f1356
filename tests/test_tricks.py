"""The shared play of the cards (imperiale_env.core.tricks): the array and the Python-int forms agree
with each other and with the reference engine's readable legality and trick winner."""

from __future__ import annotations

import random

import numpy as np
import pytest

from imperiale_agents.search.solver import legal_cards_python
from imperiale_env.core.cards import deck
from imperiale_env.core.rules import make_rules
from imperiale_env.core.tricks import beats, beats_one
from imperiale_env.kernels.trick_rules import legal_cards
from imperiale_env.reference.game import Game, trick_winner_card

PLAY_RULES = [
    make_rules("academie"), make_rules("academie3"), make_rules("imperijal"),
    make_rules("academie", must_beat=False), make_rules("academie", overtrump=False),
    make_rules("academie", must_trump=False), make_rules("academie", first_lead_trump=True),
]


@pytest.mark.parametrize("rules", PLAY_RULES, ids=lambda r: f"{r.preset}-{r.must_beat}{r.must_trump}"
                         f"{r.overtrump}{r.first_lead_trump}")
def test_legal_cards_agree_with_the_reference_engine(rules):
    rng = random.Random(3)
    cards = deck(rules.players)
    for _ in range(400):
        game = Game(rules, seed=rng.randrange(2**32))
        s = game.state
        trump = s.deal.trump
        p = rng.randrange(rules.players)
        s.hands[p] = set(rng.sample(cards, rng.randint(1, 12)))
        others = [c for c in cards if c not in s.hands[p]]
        on_table = rng.sample(others, rng.randrange(rules.players))
        s.trick = [((p - len(on_table) + k) % rules.players, c) for k, c in enumerate(on_table)]
        s.tricks_played = rng.choice([0, 0, 5])
        expected = game.legal_plays(p)
        hand = sum(1 << c for c in s.hands[p])
        led = on_table[0] if on_table else -1
        win = trick_winner_card(s.trick, trump) if on_table else 0
        fast = legal_cards(rules, hand, trump, led, win, s.tricks_played == 0)  # the kernel every fast path runs
        assert sorted(c for c in cards if (fast >> c) & 1) == expected
        assert legal_cards_python(rules, hand, trump, led, win, s.tricks_played == 0) == fast  # the Python solver's


def test_beats_agrees_with_the_reference_trick_winner():
    for trump in range(4):
        for win in range(36):
            for c in range(36):
                if c == win:
                    continue
                reference = trick_winner_card([(0, win), (1, c)], trump) == c
                assert beats_one(c, win, trump) == reference
                assert bool(beats(np.array(c), np.array(win), np.array(trump))) == reference
