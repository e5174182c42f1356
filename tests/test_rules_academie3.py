"""Académie with three players, 36 cards (docs/rules.md section 5): the dealer's trump card, the 6 as low card,
the 4-trick quota, capot, wipes of both opponents, the point among three, and the rotation of the deal.
(The legal plays of three players are in test_play_legality.py.)"""

from __future__ import annotations

import pytest
from helpers import brief, cards, drive, events, make_deal, priority, seeded_single_deals, start, until

from imperiale_env.core import actions as act
from imperiale_env.core.cards import SUITS
from imperiale_env.core.rules import make_rules
from imperiale_env.reference.game import Game, deal_cards

# Seat 0 deals; seat 1 is the elder, seat 2 second.  Clubs trump unless said otherwise.

# The elder holds eight trumps and KS QS KH KD; the dealer's only trump is the 6C he shows.  The elder must
# lead a trump, the dealer must give his 6C, and the elder takes every trick.
CAPOT3 = make_deal(0, ["6C", "KC QC JC AC 10C 9C 8C 7C KS QS KH KD", ""], "6C")

# Each player's point: the elder KS QS JS 10S, seat 2 KH QH JH 10H, the dealer KD QD JD 10D (4 cards, 40).
POINT3 = make_deal(0, [
    "KD QD JD 10D 7S 6S 7H 6H 9C KC QC JC",
    "KS QS JS 10S AH 9H 8H AD 9D 6D AC 8C",
    "KH QH JH 10H AS 9S 8S 8D 7D 7C 6C 10C",
], "KC")


def test_three_players_deal_36_cards_and_the_dealer_keeps_the_trump():
    rules = make_rules("academie3")
    for seed in range(5):
        deal = deal_cards(rules, seed, 0, 2)
        assert [len(h) for h in deal.hands] == [12, 12, 12] and deal.talon == ()
        assert len(set().union(*deal.hands)) == 36
        assert deal.turned in deal.hands[2]


def test_the_six_is_the_low_honour_the_seven_is_not():
    game = start("academie3", make_deal(0, ["", "", ""], "6C"))
    assert events(game) == [{"event": "turned_honour", "player": 0, "points": 4, "card": "6C"}]
    game = start("academie3", make_deal(0, ["", "", ""], "7C"))
    assert events(game) == []


def test_four_sixes_count_four_sevens_do_not():
    deal = make_deal(0, ["", "7S 7H 7D 7C 6S 6H 6D 6C KS QD JH 10C", ""], "KC")
    game = start("academie3", deal)
    asked = []
    while game.decision.kind == "question":
        q = game.decision.question
        if game.current_player == 1:
            asked.append((q.kind, q.rank))
        game.step(act.SHOW if game.current_player == 1 else act.HIDE)
    assert asked == [("four_of_a_kind", 8)]  # the four 6s; the four 7s are no impériale with three players
    assert brief(game) == [("turned_honour", 0, 4), ("four_of_a_kind", 1, 1), ("imperiale", 1, 1)]


def test_the_dealers_trump_card_completes_his_quart_in_hand():
    game = start("academie3", make_deal(0, ["KC QC JC", "", ""], "AC"))
    drive(game, show=lambda d: d.player == 0 and d.question.kind == "quart_major" and d.question.suit == 3,
          stop=until("point"))
    assert brief(game) == [("turned_honour", 0, 4), ("quart_major", 0, 2), ("imperiale", 0, 2)]


@pytest.mark.parametrize("turned, blanche", [("KC", False), ("10C", True)])
def test_the_dealers_trump_card_counts_for_his_carte_blanche(turned, blanche):
    game = start("academie3", make_deal(0, ["AS 10S 9S 8S 7S 6S AH 10H 9H 8H 7H", "", ""], turned))
    kinds = []
    while game.decision.kind == "question":
        kinds.append((game.decision.question.kind, game.current_player))
        game.step(act.HIDE)
    assert (("carte_blanche", 0) in kinds) is blanche


def test_carte_blanche_is_worth_two_and_ends_the_deal():
    deal = make_deal(0, ["", "AS 10S 9S 8S 7S 6S AH 10H 9H 8H 7H 6H", ""], "10C")
    game = start("academie3", deal, points=[8, 0, 4])
    assert game.decision.question.kind == "carte_blanche" and game.current_player == 1
    game.step(act.SHOW)
    drive(game)  # the others hide what they may show
    assert brief(game) == [("carte_blanche", 1, 2), ("imperiale", 1, 2), ("wipe", 0, 8), ("wipe", 2, 4)]
    assert all(a in (act.SHOW, act.HIDE) for _, a in game.history[0].actions)  # no point, no play
    assert game.history[0].tricks_played == 0 and game.current_player is None


def test_every_gain_wipes_both_opponents():
    deal = make_deal(0, ["", "KS QS JS AS", ""], "10C")
    game = start("academie3", deal, points=[8, 0, 12])
    assert game.decision.question.kind == "quart_major" and game.current_player == 1
    game.step(act.SHOW)
    assert brief(game) == [("quart_major", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 8), ("wipe", 2, 12)]


def test_the_fifth_imperiale_ends_the_game_for_all_three():
    deal = make_deal(0, ["", "KS QS JS AS", "KH QH JH AH"], "10C")
    game = start("academie3", deal, imperiales=[0, 4, 0], points=[8, 0, 12])
    game.step(act.SHOW)
    assert brief(game) == [
        ("quart_major", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 8), ("wipe", 2, 12), ("game_over", 1, None),
    ]
    assert game.winner == 1 and game.current_player is None  # seat 2's quart is never asked


def test_turned_honour_protection_with_three_players():
    deal = make_deal(0, ["", "KS QS JS AS", ""], "JC")
    game = start("academie3", deal, points=[8, 0, 12])
    game.step(act.SHOW)
    assert brief(game) == [
        ("turned_honour", 0, 4), ("quart_major", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 8), ("wipe", 2, 12),
    ]
    assert game.points == [4, 0, 0]


def test_capot_is_all_twelve_tricks():
    game = drive(start("academie3", CAPOT3, points=[0, 0, 8]))
    assert game.history[0].tricks == [0, 12, 0]
    assert brief(game) == [
        ("turned_honour", 0, 4), ("honours", 1, 20), ("capot", 1, 2), ("imperiale", 1, 2),
        ("wipe", 0, 4), ("wipe", 2, 8),
    ]


def test_no_turned_imperiale_with_three_players():
    # The dealer holds K Q J of trumps and shows the A: a quart in hand, never a turned-card impériale.
    game = start("academie3", make_deal(0, ["KC QC JC", "", ""], "AC"))
    asked = []
    while game.decision.kind == "question":
        asked.append(game.decision.question.kind)
        game.step(act.HIDE)
    assert "turned_imperiale" not in asked


@pytest.mark.parametrize(
    "declared, winner",
    [
        ({1: "S", 2: "H", 0: "D"}, 1),  # a three-way tie: the elder
        ({2: "H", 0: "D"}, 2),  # seat 2 comes before the dealer
        ({1: "C", 2: "H", 0: "D"}, 2),  # the elder's clubs have 2 cards
        ({1: "C", 2: "S", 0: "D"}, 0),
        ({0: "C"}, 0),
    ],
)
def test_point_compared_among_three(declared, winner):
    game = start("academie3", POINT3)
    assert [game.current_player] == [1]
    drive(game, points=declared, stop=until("play"))
    assert brief(game) == [("turned_honour", 0, 4), ("point", winner, 4)]
    assert events(game, kind="point")[0]["suit"] == declared[winner]


def test_priority_order_of_three_declarations():
    game = start("academie3", POINT3)
    order = []
    while game.decision.kind != "play":
        order.append(game.current_player)
        game.step(act.SINK)
    assert order == [1, 2, 0]
    assert game.current_player == 1


def test_tricks_over_four_score_a_counter_each():
    rules = make_rules("academie3", target_imperiales=99)
    seen = set()
    for game in seeded_single_deals(rules, range(30)):
        s = game.history[0]
        assert sum(s.tricks) == 12
        expected = [{"event": "tricks", "player": p, "points": 4 * (s.tricks[p] - 4), "tricks": s.tricks[p]}
                    for p in priority(game) if 4 < s.tricks[p] < 12]
        assert events(game, kind="tricks") == expected
        honours = cards(" ".join(r + SUITS[s.deal.trump] for r in ("K", "Q", "J", "A", "6")))
        for e in events(game, kind="honours"):
            assert e["count"] == len(honours & s.captured[e["player"]]) and e["points"] == 4 * e["count"]
        seen.update(s.tricks)
    assert max(seen) > 4  # some deal had tricks to score


def test_the_deal_rotates_through_all_three_seats():
    game = drive(Game("academie3", seed=3, dealer=2), stop=lambda g: len(g.history) > 4)
    assert [h.deal.dealer for h in game.history[:5]] == [2, 0, 1, 2, 0]
    assert {Game("academie3", seed=s).start_dealer for s in range(30)} == {0, 1, 2}
