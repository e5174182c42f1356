"""Imperijal (docs/rules.md section 7): scoring in points, honours without the Ace and held in hand, the extra
sequence Q J A low, comparison by number, the split point, the trick bonus, capot and the fallen impériale.
(The legal plays of Imperijal are in test_play_legality.py.)"""

from __future__ import annotations

import pytest
from helpers import (
    BOTH,
    CAPOT,
    CAPTURE,
    CAPTURE_PLAY,
    EVEN,
    EVEN_PLAY,
    EX3_AH,
    EX3_AH_PLAY,
    EX4,
    EX4_PLAY,
    TIE_DEALER,
    TIE_ELDER,
    TOMBEE,
    TOMBEE_PLAY,
    brief,
    by_role,
    cards,
    drive,
    events,
    finish,
    make_deal,
    priority,
    seeded_single_deals,
    start,
    until,
)

from imperiale_env.core import actions as act
from imperiale_env.core.cards import SUITS
from imperiale_env.core.rules import make_rules

# The elder has carte blanche; the dealer holds the quarts of S and D and K Q J 7 of hearts (trumps); the
# turned AH (no honour here) completes his K Q J A of trumps.
BLANCHE = make_deal(0, ["KS QS JS AS KH QH JH 7H KD QD JD AD", "10S 9S 8S 7S 10H 9H 8H 10D 9D 8D 7D 7C"], "AH")

# Hearts trump, AH turned.  The elder holds the quarts of S and D; the dealer the four 7s and K Q J 7 of
# hearts (the turned AH completes K Q J A and Q J A 7 of trumps: one turned-card impériale).
NUMBER = make_deal(0, ["KH QH JH 7S 7H 7D 7C 10S 9S 10D 9D 10C", "KS QS JS AS 8S 10H 9H 8H KD QD JD AD"], "AH")


def shown_kinds(game, show):
    """Answer every question (show(decision) says which to show) and list (kind, player) of the questions."""
    asked = []
    while game.decision is not None and game.decision.kind == "question":
        asked.append((game.decision.question.kind, game.current_player))
        game.step(act.SHOW if show(game.decision) else act.HIDE)
    return asked


# ---------------------------------------------------------------- the turned card and honours


@pytest.mark.parametrize("rank, honour", [("K", True), ("Q", True), ("J", True), ("7", True), ("A", False),
                                          ("10", False)])
def test_turned_honour_without_the_ace(rank, honour):
    game = start("imperijal", make_deal(1, ["", ""], rank + "S"))
    assert brief(game) == ([("turned_honour", 1, 4)] if honour else [])


def test_honours_in_hand_then_captured_and_the_ace_is_no_honour():
    # The elder holds KH 7H; the dealer's AH falls to the elder's KH.
    game = finish(start("imperijal", EX3_AH), *EX3_AH_PLAY)
    assert events(game) == [
        {"event": "honours", "player": 1, "points": 8, "count": 2, "in_hand": True},
        {"event": "honours", "player": 1, "points": 8, "count": 2},
        {"event": "tricks", "player": 1, "points": 4, "tricks": 8},
    ]


# ---------------------------------------------------------------- carte blanche


def test_carte_blanche_ten_points_the_other_declarations_scored_and_no_play():
    game = start("imperijal", BLANCHE)
    asked = []
    while game.decision.question.kind != "turned_imperiale":
        asked.append((game.decision.question.kind, game.current_player))
        game.step(act.SHOW)
    assert asked == [("carte_blanche", 1), ("quart_major", 0), ("quart_major", 0)]
    assert events(game) == []  # nothing is scored before every question is answered
    game.step(act.SHOW)
    drive(game, points={1: "D"})
    assert brief(game) == [
        ("carte_blanche", 1, 10),
        ("quart_major", 0, 24), ("imperiale", 0, 1), ("wipe", 1, 10),
        ("quart_major", 0, 24), ("imperiale", 0, 1),
        ("turned_imperiale", 0, 24), ("imperiale", 0, 1),
        ("point", 1, 4),
        ("honours", 0, 16),
    ]
    assert game.history[0].tricks_played == 0 and game.current_player is None
    assert game.imperiales == [3, 0] and game.points == [16, 4]


# ---------------------------------------------------------------- impériales compared by number


def test_equal_numbers_score_nothing():
    game = start("imperijal", BOTH, points=[8, 8])
    shown_kinds(game, lambda d: True)
    assert game.decision.kind == "point" and events(game) == [] and game.points == [8, 8]


def test_a_four_of_a_kind_is_worth_24_points():
    game = start("imperijal", BOTH, points=[8, 8])
    shown_kinds(game, lambda d: d.player == 0)
    assert events(game) == [
        {"event": "four_of_a_kind", "player": 0, "points": 24, "cards": ["7S", "7H", "7D", "7C"]},
        {"event": "imperiale", "player": 0, "count": 1, "total": 1},
        {"event": "wipe", "player": 1, "points": 8},
    ]
    assert game.points == [8, 0]


def test_the_turned_imperiale_counts_in_the_comparison():
    # Elder: two quarts; dealer: four 7s and the turned-card impériale.  Two each: nothing.
    game = start("imperijal", NUMBER)
    asked = shown_kinds(game, lambda d: True)
    assert asked == [("quart_major", 1), ("quart_major", 1), ("four_of_a_kind", 0), ("turned_imperiale", 0)]
    assert events(game) == [] and game.decision.kind == "point"


def test_more_impériales_score_24_points_each_and_the_deal_goes_on():
    game = start("imperijal", NUMBER, points=[8, 4])
    shown_kinds(game, lambda d: d.question.kind != "turned_imperiale")
    assert brief(game) == [
        ("quart_major", 1, 24), ("imperiale", 1, 1), ("wipe", 0, 8),
        ("quart_major", 1, 24), ("imperiale", 1, 1),
    ]
    assert game.imperiales == [0, 2] and game.points == [0, 4]
    drive(game)
    assert game.history[0].tricks_played == 12


def test_three_players_tied_leaders_both_score():
    rules = make_rules("imperijal", players=3)
    deal = make_deal(0, ["KD QD JD AD", "KS QS JS AS", "KH QH JH AH"], "10C")
    game = start(rules, deal, points=[8, 0, 0])
    shown_kinds(game, lambda d: d.player in (1, 2) and d.question.kind == "quart_major")
    assert brief(game) == [
        ("quart_major", 1, 24), ("imperiale", 1, 1), ("wipe", 0, 8),
        ("quart_major", 2, 24), ("imperiale", 2, 1),
    ]
    game = start(rules, deal)
    shown_kinds(game, lambda d: d.question.kind == "quart_major")
    assert events(game) == []  # one each: nobody shows more


def test_the_extra_sequence_q_j_a_low():
    game = start("imperijal", make_deal(0, ["", "QS JS AS 7S 10S 9S 10H 9H 10D 9D 10C 9C"], "8H"))
    assert game.decision.question.kind == "sequence" and game.decision.question.suit == SUITS.index("S")
    shown_kinds(game, lambda d: d.player == 1)
    assert events(game) == [
        {"event": "quart_major", "player": 1, "points": 24, "cards": ["QS", "JS", "AS", "7S"]},
        {"event": "imperiale", "player": 1, "count": 1, "total": 1},
    ]


def test_quart_and_sequence_share_cards():
    game = start("imperijal", make_deal(0, ["", "KS QS JS AS 7S 9S 10H 9H 10D 9D 10C 9C"], "8H"))
    assert shown_kinds(game, lambda d: d.player == 1)[:2] == [("quart_major", 1), ("sequence", 1)]
    assert [e[:2] for e in brief(game)][:3] == [("quart_major", 1), ("imperiale", 1), ("quart_major", 1)]
    assert game.imperiales[1] == 2


def test_the_turned_card_completes_q_j_a_7():
    game = start("imperijal", make_deal(0, ["QH JH 7H", ""], "AH"))
    assert shown_kinds(game, lambda d: d.question.kind == "turned_imperiale")[-1] == ("turned_imperiale", 0)
    assert brief(game) == [("turned_imperiale", 0, 24), ("imperiale", 0, 1)]


def test_no_turned_imperiale_with_three_players():
    assert not make_rules("imperijal", players=3).turned_imperiale


def test_the_fifth_imperiale_ends_the_game_at_once():
    game = start("imperijal", NUMBER, imperiales=[0, 4])
    shown_kinds(game, lambda d: d.player == 1)
    assert brief(game) == [("quart_major", 1, 24), ("imperiale", 1, 1), ("game_over", 1, None)]
    assert game.current_player is None and game.imperiales == [0, 5]


# ---------------------------------------------------------------- the point


@pytest.mark.parametrize(
    "elder, dealer, expected",
    [
        ("S", "H", [("point", 1, 2), ("point", 0, 2)]),  # 4 cards, 40 each: 2 points each
        ("D", "D", [("point", 1, 4)]),  # 4 cards, 38 against 37
        ("D", "H", [("point", 0, 4)]),
        ("C", None, [("point", 1, 4)]),
    ],
)
def test_point_longest_then_value_then_split(elder, dealer, expected):
    game = start("imperijal", by_role(0, TIE_ELDER, TIE_DEALER, "9H"))
    drive(game, points={p: s for p, s in ((1, elder), (0, dealer)) if s}, stop=until("play"))
    assert [e for e in brief(game) if e[0] == "point"] == expected


def test_point_tie_by_priority_can_be_configured():
    game = start(make_rules("imperijal", point_tie="priority"), by_role(0, TIE_ELDER, TIE_DEALER, "9H"))
    drive(game, points={1: "S", 0: "H"}, stop=until("play"))
    assert [e for e in brief(game) if e[0] == "point"] == [("point", 1, 4)]


# ---------------------------------------------------------------- after play


def test_four_points_once_for_more_than_six_tricks():
    game = finish(start("imperijal", EX4), *EX4_PLAY)
    assert brief(game) == [("tricks", 1, 4)]  # 7 tricks
    game = finish(start("imperijal", EVEN), *EVEN_PLAY)
    assert brief(game) == []


def test_capot_eight_points_more():
    # The elder holds K Q J 7 of trumps (16 in hand), captures them (16), 12 tricks (4 + 8).
    game = drive(start("imperijal", CAPOT))
    assert brief(game) == [
        ("honours", 1, 16), ("honours", 1, 16), ("imperiale", 1, 1), ("tricks", 1, 4), ("capot", 1, 8),
    ]
    assert game.imperiales == [0, 1] and game.points == [0, 20]


def test_fallen_imperiale_capture_is_24_points_last():
    game = finish(start("imperijal", CAPTURE), *CAPTURE_PLAY)
    assert brief(game) == [
        ("honours", 1, 12), ("honours", 0, 4),  # in hand: KH QH JH; 7H
        ("honours", 1, 16), ("imperiale", 1, 1), ("wipe", 0, 4),
        ("tricks", 1, 4), ("capot", 1, 8),
        ("fallen_imperiale", 1, 24), ("imperiale", 1, 1),
    ]
    assert game.imperiales == [0, 2] and game.points == [0, 16]


def test_no_fallen_imperiale_without_the_adversarys_low_trump():
    game = finish(start("imperijal", TOMBEE), *TOMBEE_PLAY)  # the 7H was the elder's own
    assert "fallen_imperiale" not in [e[0] for e in brief(game)]


def test_seeded_deals_score_honours_and_the_trick_bonus():
    seen = set()
    for game in seeded_single_deals(make_rules("imperijal", target_imperiales=99), range(40)):
        s = game.history[0]
        trump = SUITS[s.deal.trump]
        honours = cards(" ".join(r + trump for r in ("K", "Q", "J", "7")))
        held = [(p, len(honours & s.deal.hands[p]), True) for p in priority(game) if honours & s.deal.hands[p]]
        won = [(p, len(honours & s.captured[p]), False) for p in priority(game) if honours & s.captured[p]]
        assert [(e["player"], e["count"], e.get("in_hand", False)) for e in events(game, kind="honours")] == held + won
        assert [e["player"] for e in events(game, kind="tricks")] == [p for p in priority(game) if s.tricks[p] > 6]
        assert all(e["points"] == 4 for e in events(game, kind="tricks"))
        seen.update(s.tricks)
    assert max(seen) > 6


def test_the_turned_card_does_not_complete_a_four():
    # Section 7 lists only K Q J A and Q J A 7: three 9s and a turned 9 ask nothing in Imperijal ...
    deal = make_deal(0, ["9S 9D 9C", ""], "9H")
    game = start("imperijal", deal)
    assert all(q != "turned_imperiale" for q, _ in shown_kinds(game, lambda d: True))
    # ... while Académie (with the option on) lets it complete a four of the four ranks.
    game = start(make_rules("academie", turned_imperiale=True, four_ranks=("K", "Q", "J", "A", "low", "9")), deal)
    assert game.decision.question.kind == "turned_imperiale"
