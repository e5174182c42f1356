"""Académie, two players (docs/rules.md sections 3, 4, 8, 9): every score event, wipes, the chronology, the end of
a game mid-deal, dealers and seeds."""

from __future__ import annotations

import pytest
from helpers import (
    BOTH,
    CAPOT,
    CAPTURE,
    CAPTURE_PLAY,
    CARTE_BLANCHE,
    EVEN,
    EVEN_PLAY,
    EX3,
    EX3_AH,
    EX3_AH_PLAY,
    EX3_PLAY,
    EX4,
    EX4_PLAY,
    PROTECT,
    TIE_DEALER,
    TIE_ELDER,
    brief,
    by_role,
    cards,
    drive,
    events,
    finish,
    make_deal,
    names,
    play,
    priority,
    seeded_single_deals,
    start,
    until,
)

from imperiale_env.core import actions as act
from imperiale_env.core.cards import SUITS
from imperiale_env.core.rules import make_rules
from imperiale_env.reference.game import Game, IllegalActionError, deal_cards

# Worked example 1: the elder holds A K Q J of spades and the four 7s; hearts trump (10H turned).
EX1 = make_deal(0, ["8S KH QH JH 9H 8H KD QD JD KC QC JC", "KS QS JS AS 7S 7H 7D 7C 10S 9S 8D 9D"], "10H")

# The dealer holds KH QH JH and AS AD AC: the turned AH completes his trump quart and his four aces.
TURNED_IMP = make_deal(0, ["KH QH JH AS AD AC 10S 9S 10D 9D 10C 9C", ""], "AH")


def question(game):
    """(kind, player, suit, rank) of the pending question."""
    d = game.decision
    assert d.kind == "question", d
    q = d.question
    return q.kind, d.player, q.suit, q.rank


# ---------------------------------------------------------------- worked examples (docs/rules.md section 9)


def test_worked_example_1_quart_major_and_four_sevens():
    game = start("academie", EX1, points=[12, 0])
    assert question(game) == ("quart_major", 1, SUITS.index("S"), None)
    game.step(act.SHOW)
    assert question(game)[:2] == ("four_of_a_kind", 1)
    game.step(act.SHOW)
    assert events(game) == [
        {"event": "quart_major", "player": 1, "imperiales": 1, "cards": ["KS", "QS", "JS", "AS"]},
        {"event": "imperiale", "player": 1, "count": 1, "total": 1},
        {"event": "wipe", "player": 0, "points": 12},
        {"event": "four_of_a_kind", "player": 1, "imperiales": 1, "cards": ["7S", "7H", "7D", "7C"]},
        {"event": "imperiale", "player": 1, "count": 1, "total": 2},
    ]
    assert game.imperiales == [0, 2] and game.points == [0, 0]
    assert game.decision.kind == "point"  # the deal goes on


def test_worked_example_3_honours_then_tricks():
    game = finish(start("academie", EX3, points=[8, 16]), *EX3_PLAY)
    assert game.history[0].tricks == [4, 8]
    assert events(game) == [
        {"event": "honours", "player": 1, "points": 8, "count": 2},
        {"event": "imperiale", "player": 1, "count": 1, "total": 1},
        {"event": "wipe", "player": 0, "points": 8},
        {"event": "tricks", "player": 1, "points": 8, "tricks": 8},
    ]
    assert game.imperiales == [0, 1] and game.points == [0, 8]


# ---------------------------------------------------------------- award and gain (section 3)


def test_award_keeps_the_remainder():
    # 5 counters and 2 more: one impériale and 1 counter (then the 2 counters of the tricks).
    game = finish(start("academie", EX3, points=[8, 20]), *EX3_PLAY)
    assert brief(game) == [("honours", 1, 8), ("imperiale", 1, 1), ("wipe", 0, 8), ("tricks", 1, 8)]
    assert game.imperiales == [0, 1] and game.points == [0, 12]


def test_a_gain_wipes_only_when_there_is_something_to_wipe():
    game = start("academie", EX1)
    drive(game, show=True, stop=until("point"))
    assert "wipe" not in [e["event"] for e in events(game)]


# ---------------------------------------------------------------- step 1: the turned card


@pytest.mark.parametrize("rank", ["A", "K", "Q", "J", "7"])
@pytest.mark.parametrize("dealer", [0, 1])
def test_turned_honour(rank, dealer):
    game = start("academie", make_deal(dealer, ["", ""], rank + "D"))
    assert events(game) == [{"event": "turned_honour", "player": dealer, "points": 4, "card": rank + "D"}]
    assert game.points[dealer] == 4 and game.points[1 - dealer] == 0


@pytest.mark.parametrize("rank", ["10", "9", "8"])
def test_turned_card_not_an_honour(rank):
    game = start("academie", make_deal(0, ["", ""], rank + "D"))
    assert events(game) == [] and game.points == [0, 0]


# ---------------------------------------------------------------- step 2: carte blanche and impériales in hand


def test_carte_blanche_is_worth_two_imperiales_and_ends_the_deal():
    rules = make_rules("academie")
    game = Game(rules, dealer=0, points=[12, 8],
                deals=lambda i, d: CARTE_BLANCHE if i == 0 else deal_cards(rules, 5, i, d))
    assert question(game)[:2] == ("carte_blanche", 1)
    game.step(act.SHOW)
    # The dealer's impériales in hand are still asked and scored: quarts of S, H, D in canonical order.
    assert question(game)[:3] == ("quart_major", 0, 0)
    game.step(act.SHOW)
    assert question(game)[:3] == ("quart_major", 0, 1)
    game.step(act.HIDE)
    assert question(game)[:3] == ("quart_major", 0, 2)
    game.step(act.SHOW)
    assert brief(game) == [
        ("carte_blanche", 1, 2), ("imperiale", 1, 2), ("wipe", 0, 12),
        ("quart_major", 0, 1), ("imperiale", 0, 1), ("wipe", 1, 8),
        ("quart_major", 0, 1), ("imperiale", 0, 1),
    ]
    assert game.imperiales == [2, 2]
    # No point, no play: the next deal has begun, dealt by seat 1.
    assert [a for _, a in game.history[0].actions] == [act.SHOW, act.SHOW, act.HIDE, act.SHOW]
    assert len(game.history) == 2 and game.history[1].deal.dealer == 1


def test_hidden_carte_blanche_and_impériales_score_nothing_and_the_deal_is_played():
    game = start("academie", CARTE_BLANCHE)
    drive(game, show=False, stop=until("point"))
    assert events(game) == [] and game.current_player == 1
    drive(game)
    assert "carte_blanche" not in names(game) and game.history[0].tricks_played == 12
    assert not {"quart_major", "four_of_a_kind"} & {e for e, _ in names(game)}


def test_plain_quart_is_worth_one_trump_quart_two():
    game = start("academie", make_deal(0, ["", "KH QH JH AH KS QS JS AS 9S 8D 7D 9C"], "10H"))
    assert question(game)[:3] == ("quart_major", 1, 0)
    game.step(act.SHOW)
    assert question(game)[:3] == ("quart_major", 1, 1)
    game.step(act.SHOW)
    assert brief(game) == [("quart_major", 1, 1), ("imperiale", 1, 1), ("quart_major", 1, 2), ("imperiale", 1, 2)]
    assert game.imperiales == [0, 3]


def test_a_card_serves_in_a_quart_and_a_four_at_once():
    game = start("academie", make_deal(0, ["", "KS QS JS AS KH KD KC 10S 9S 8S 10D 9D"], "10H"))
    assert question(game)[:3] == ("quart_major", 1, 0)
    game.step(act.SHOW)
    assert question(game) == ("four_of_a_kind", 1, None, 0)
    game.step(act.SHOW)
    assert game.imperiales == [0, 2]
    assert events(game, kind="four_of_a_kind")[0]["cards"] == ["KS", "KH", "KD", "KC"]


@pytest.mark.parametrize("rank", ["K", "Q", "J", "A", "7"])
def test_four_of_a_kind_is_worth_one(rank):
    four = " ".join(rank + s for s in SUITS)
    game = start("academie", make_deal(0, ["", four], "9H"))
    drive(game, show=lambda d: d.question.kind == "four_of_a_kind", stop=until("point"))
    assert events(game, kind="four_of_a_kind") == [
        {"event": "four_of_a_kind", "player": 1, "imperiales": 1, "cards": [rank + s for s in SUITS]}
    ]


def test_no_four_of_tens_nines_or_eights():
    game = start("academie", make_deal(0, ["", "10S 10H 10D 10C 9S 9H 9D 9C 8S 8H 8D KC"], "7H"))
    asked = []
    while game.decision.kind == "question":
        asked.append(question(game)[:2])
        game.step(act.HIDE)
    assert asked and all(p == 0 for _, p in asked)  # the dealer's quarts; the elder is asked nothing


def test_questions_come_in_canonical_order():
    # Quarts by suit S H D C, then fours in the order K Q J A low; the elder first, then the dealer.
    game = start("academie", make_deal(0, ["7S 7H 7D 7C", "KD QD JD AD KS QS JS AS AH AC"], "10H"))
    asked = []
    while game.decision.kind == "question":
        asked.append(question(game))
        game.step(act.HIDE)
    assert asked == [
        ("quart_major", 1, 0, None), ("quart_major", 1, 2, None), ("four_of_a_kind", 1, None, 3),
        ("four_of_a_kind", 0, None, 7),
    ]


def test_both_players_show_each_wipes_the_other_in_turn():
    game = start("academie", BOTH, points=[12, 8])
    drive(game, show=True, stop=until("point"))
    assert brief(game) == [
        ("quart_major", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 12),
        ("four_of_a_kind", 0, 1), ("imperiale", 0, 1), ("wipe", 1, 8),
    ]
    assert game.points == [0, 0] and game.imperiales == [1, 1]


# ---------------------------------------------------------------- the turned honour's protection


def test_an_imperiale_in_hand_leaves_the_dealer_the_four_turned_points():
    game = start("academie", PROTECT, points=[8, 20])
    assert brief(game) == [("turned_honour", 0, 4)]
    drive(game, show=True, stop=until("point"))
    assert brief(game)[1:] == [("quart_major", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 8)]
    assert game.points == [4, 20]
    # From the point on, a wipe wipes everything: the elder's point makes his 24th point.
    drive(game, points={1: "S"}, stop=until("play"))
    assert brief(game)[4:] == [("point", 1, 4), ("imperiale", 1, 1), ("wipe", 0, 4)]
    assert game.points == [0, 0] and game.imperiales == [0, 2]


def test_protection_covers_the_carte_blanche():
    deal = make_deal(0, ["", "10S 9S 8S 7S 10H 9H 8H 7H 10D 9D 8D 7D"], "AC")
    game = start("academie", deal, points=[8, 0])
    game.step(act.SHOW)
    assert brief(game) == [("turned_honour", 0, 4), ("carte_blanche", 1, 2), ("imperiale", 1, 2), ("wipe", 0, 8)]
    assert game.points == [4, 0]


def test_the_dealer_keeps_at_most_what_he_has():
    # Dealer at 20: the turned AH makes 24, an impériale and 0 points; nothing is left to protect.
    game = start("academie", PROTECT, points=[20, 8])
    assert brief(game) == [("turned_honour", 0, 4), ("imperiale", 0, 1), ("wipe", 1, 8)]
    drive(game, show=True, stop=until("point"))
    assert game.points == [0, 0] and game.imperiales == [1, 1]


# ---------------------------------------------------------------- step 3: the turned-card impériale


def test_turned_imperiale_is_off_by_default():
    game = start("academie", TURNED_IMP)
    assert brief(game) == [("turned_honour", 0, 4)]
    assert game.decision.kind == "point"


def test_turned_imperiale_override_is_worth_one_and_never_two():
    game = start(make_rules("academie", turned_imperiale=True), TURNED_IMP)
    assert question(game) == ("turned_imperiale", 0, SUITS.index("H"), 3)
    game.step(act.SHOW)
    assert events(game)[1:] == [
        {"event": "turned_imperiale", "player": 0, "imperiales": 1, "card": "AH"},
        {"event": "imperiale", "player": 0, "count": 1, "total": 1},
    ]
    assert game.decision.kind == "point"


def test_turned_imperiale_comes_after_the_impériales_in_hand():
    deal = make_deal(0, ["KH QH JH JS JD JC 10S 9S 10D 9D 10C 9C", "7S 7H 7D 7C KS QS AS KD QD AD KC QC"], "AH")
    game = start(make_rules("academie", turned_imperiale=True), deal)
    asked = []
    while game.decision.kind == "question":
        asked.append(question(game)[:2])
        game.step(act.HIDE)
    assert asked == [("four_of_a_kind", 1), ("four_of_a_kind", 0), ("turned_imperiale", 0)]
    assert game.decision.kind == "point" and brief(game) == [("turned_honour", 0, 4)]


def test_hidden_turned_imperiale_scores_nothing():
    game = start(make_rules("academie", turned_imperiale=True), TURNED_IMP)
    game.step(act.HIDE)
    assert brief(game) == [("turned_honour", 0, 4)]


# ---------------------------------------------------------------- step 4: the point

# The elder: S AS 10S 9S 8S 7S (5, 45), H (2, 19), D (2, 19), C 10C 9C 7C (3, 26).
# The dealer: S KS QS JS (3, 30), H KH QH JH AH (4, 41), D (3, 30), C KC QC (2, 20).
POINTS = make_deal(0, ["KS QS JS KH QH JH AH KD QD JD KC QC", "AS 10S 9S 8S 7S 10H 9H 10D 9D 10C 9C 7C"], "8C")


@pytest.mark.parametrize(
    "elder, dealer, winner, count, value",
    [
        ("S", "H", 1, 5, 45),  # more cards beats more value
        ("C", "S", 0, 3, 30),  # equal number: the value
        ("H", "C", 0, 2, 20),
        (None, "C", 0, 2, 20),  # a sunk point never wins
        ("S", None, 1, 5, 45),
    ],
)
def test_point_compared_by_number_then_value(elder, dealer, winner, count, value):
    game = start("academie", POINTS)
    declared = {p: s for p, s in ((1, elder), (0, dealer)) if s}
    drive(game, points=declared, stop=until("play"))
    suit = declared[winner]
    assert events(game) == [
        {"event": "point", "player": winner, "points": 4, "suit": suit, "count": count, "value": value}
    ]
    # The winner's point cards are shown to all.
    assert {c for c in game.state.deal.hands[winner] if c // 9 == SUITS.index(suit)} <= game.state.revealed[winner]


def test_both_sink_nobody_scores_the_point():
    game = start("academie", POINTS)
    drive(game, stop=until("play"))
    assert events(game) == [] and game.state.declared_points == [None, None]


def test_declared_counts_and_values_are_public():
    game = start("academie", POINTS)
    drive(game, points={1: "C", 0: "S"}, stop=until("play"))
    assert game.state.declared_points == [(0, 3, 30), (3, 3, 26)]


@pytest.mark.parametrize("dealer", [0, 1])
def test_point_full_tie_goes_to_the_elder(dealer):
    game = start("academie", by_role(dealer, TIE_ELDER, TIE_DEALER, "9H"))
    elder = 1 - dealer
    drive(game, points={elder: "S", dealer: "H"}, stop=until("play"))
    assert brief(game) == [("point", elder, 4)]


def test_only_a_suit_held_may_be_declared():
    game = start("academie", by_role(0, TIE_ELDER, TIE_DEALER, "9H"))
    assert game.decision.kind == "point" and game.current_player == 1
    assert game.legal_actions() == [act.point_action(0), act.point_action(2), act.point_action(3), act.SINK]
    with pytest.raises(IllegalActionError):
        game.step(act.point_action(1))


# ---------------------------------------------------------------- step 6: honours, fallen impériale, cards


def test_honours_are_counted_in_the_tricks_not_in_the_hand():
    # The dealer's AH falls to the elder's KH: 3 honours for the elder, none for the dealer.
    game = finish(start("academie", EX3_AH), *EX3_AH_PLAY)
    assert brief(game) == [("honours", 1, 12), ("tricks", 1, 8)]
    assert events(game, kind="honours")[0]["count"] == 3


def test_six_tricks_each_score_nothing():
    game = finish(start("academie", EVEN), *EVEN_PLAY)
    assert game.history[0].tricks == [6, 6] and events(game) == []


def test_seven_tricks_score_one_counter():
    game = finish(start("academie", EX4), *EX4_PLAY)
    assert game.history[0].tricks == [5, 7]
    assert events(game) == [{"event": "tricks", "player": 1, "points": 4, "tricks": 7}]


def test_capot_gains_two_imperiales_instead_of_trick_points():
    game = finish(start("academie", CAPOT, points=[8, 0]))
    assert game.history[0].tricks == [0, 12]
    assert brief(game) == [
        ("honours", 1, 20), ("capot", 1, 2), ("imperiale", 1, 2), ("wipe", 0, 8),
    ]
    assert game.imperiales == [0, 2] and game.points == [0, 20]


def test_fallen_imperiale_is_off_by_default():
    game = finish(start("academie", CAPTURE), *CAPTURE_PLAY)
    assert "fallen_imperiale" not in [e for e, _ in names(game)]


def test_fallen_imperiale_override_tricks():
    # The elder's tricks hold A K Q J of trumps: one impériale, after the honours and before the cards.
    game = finish(start(make_rules("academie", fallen_imperiale="tricks"), CAPTURE, points=[4, 0]), *CAPTURE_PLAY)
    assert brief(game) == [
        ("honours", 1, 20), ("fallen_imperiale", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 4),
        ("capot", 1, 2), ("imperiale", 1, 2),
    ]
    assert game.imperiales == [0, 3]


def test_fallen_imperiale_tricks_needs_the_four_cards():
    # EX3: the elder's tricks hold KH but not A Q J of trumps (they are in the talon).
    game = finish(start(make_rules("academie", fallen_imperiale="tricks"), EX3), *EX3_PLAY)
    assert [e for e, _ in names(game)] == ["honours", "tricks"]


def test_seeded_deals_score_honours_and_tricks_by_the_rules():
    seen = set()
    for game in seeded_single_deals(make_rules("academie", target_imperiales=99), range(40)):
        s = game.history[0]
        trump = SUITS[s.deal.trump]
        honours = cards(" ".join(r + trump for r in ("A", "K", "Q", "J", "7")))
        assert [(e["player"], e["count"]) for e in events(game, kind="honours")] == [
            (p, len(honours & s.captured[p])) for p in priority(game) if honours & s.captured[p]
        ]
        assert [(e["player"], e["points"]) for e in events(game, kind="tricks")] == [
            (p, 4 * (s.tricks[p] - 6)) for p in priority(game) if 6 < s.tricks[p] < 12
        ]
        assert [e["player"] for e in events(game, kind="capot")] == [p for p in priority(game) if s.tricks[p] == 12]
        seen.update(s.tricks)
    assert max(seen) > 6


# ---------------------------------------------------------------- the end of a game, mid-deal


def test_showing_the_fifth_imperiale_ends_the_game_at_once():
    game = start("academie", EX1, imperiales=[3, 4], points=[12, 0])
    game.step(act.SHOW)
    assert brief(game) == [("quart_major", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 12), ("game_over", 1, None)]
    assert game.is_over and game.winner == 1 and game.imperiales == [3, 5]
    assert game.current_player is None and game.legal_actions() == [] and not game.legal_mask().any()
    with pytest.raises(IllegalActionError):
        game.step(act.SHOW)  # the four 7s are never asked
    assert game.events[-1] == {"event": "game_over", "player": 1, "deal": 0}


def test_a_turned_honour_can_end_the_game_before_any_declaration():
    game = start("academie", PROTECT, imperiales=[4, 0], points=[20, 8])
    assert brief(game) == [("turned_honour", 0, 4), ("imperiale", 0, 1), ("wipe", 1, 8), ("game_over", 0, None)]
    assert game.winner == 0 and game.current_player is None and game.history[0].actions == []


def test_later_items_are_not_scored_after_the_game_ends():
    game = start("academie", EX3, imperiales=[0, 4], points=[8, 16])
    drive(game, stop=until("play"))
    play(game, *EX3_PLAY)
    assert brief(game) == [("honours", 1, 8), ("imperiale", 1, 1), ("wipe", 0, 8), ("game_over", 1, None)]
    assert game.points == [0, 0] and game.winner == 1  # the tricks are not scored


def test_target_can_be_configured():
    game = start(make_rules("academie", target_imperiales=2), EX1)
    game.step(act.SHOW)
    assert game.is_over is False
    game.step(act.SHOW)
    assert game.is_over and game.winner == 1 and game.imperiales == [0, 2]


# ---------------------------------------------------------------- dealers, seeds, single deals


def played(game: Game, deals: int) -> Game:
    return drive(game, stop=lambda g: len(g.history) > deals)


def test_the_deal_passes_to_the_other_player():
    game = played(Game("academie", seed=11), 4)
    first = game.start_dealer
    assert [h.deal.dealer for h in game.history[:5]] == [first, 1 - first, first, 1 - first, first]
    # Each deal's elder (the player after the dealer) declares his point and leads first.
    for h in game.history[:4]:
        assert next(p for p, a in h.actions if a == act.SINK) == 1 - h.deal.dealer
        assert next(p for p, a in h.actions if act.is_play(a)) == 1 - h.deal.dealer


def test_dealer_can_be_given():
    game = Game("academie", seed=11, dealer=1)
    assert game.start_dealer == 1 and game.history[0].deal.dealer == 1


def test_same_seed_same_game():
    a, b = played(Game("academie", seed=42), 3), played(Game("academie", seed=42), 3)
    assert a.start_dealer == b.start_dealer and a.events == b.events
    assert [h.deal for h in a.history] == [h.deal for h in b.history]


def test_first_dealer_and_deals_vary_over_seeds():
    assert {Game("academie", seed=s).start_dealer for s in range(24)} == {0, 1}
    assert len({Game("academie", seed=s).history[0].deal.hands for s in range(8)}) == 8


def test_seeded_deal_shape():
    rules = make_rules("academie")
    deal = deal_cards(rules, 3, 0, 1)
    assert [len(h) for h in deal.hands] == [12, 12] and len(deal.talon) == 7
    assert set().union(*deal.hands, deal.talon, {deal.turned}) == set(cards(
        " ".join(r + s for s in SUITS for r in ("K", "Q", "J", "A", "10", "9", "8", "7"))))


def test_single_deal_ends_the_game_after_its_deal():
    game = drive(Game("academie", seed=5, single_deal=True))
    assert game.is_over and game.winner is None and game.current_player is None
    assert len(game.history) == 1 and game.history[0].tricks_played == 12


def test_a_game_is_played_to_the_end():
    game = drive(Game(make_rules("academie", target_imperiales=2), seed=9), show=True)
    assert game.is_over and game.winner is not None and game.imperiales[game.winner] >= 2
    assert game.events[-1]["event"] == "game_over"
