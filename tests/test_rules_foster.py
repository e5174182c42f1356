"""Foster (docs/rules.md section 6): the point before the impériales, the dealer's declarations after the first
lead, comparison by category, carte blanche, the turned-card impériale, the tombée, trick difference, capot
and the wipe exceptions."""

from __future__ import annotations

import pytest
from helpers import (
    BOTH,
    CAPTURE,
    CAPTURE_PLAY,
    CARTE_BLANCHE,
    EVEN,
    EVEN_PLAY,
    EX3,
    EX3_PLAY,
    EX4,
    EX4_PLAY,
    PROTECT,
    TOMBEE,
    TOMBEE_PLAY,
    brief,
    by_role,
    drive,
    events,
    finish,
    make_deal,
    priority,
    seeded_single_deals,
    start,
)

from imperiale_env.core import actions as act
from imperiale_env.core.cards import RANKS, SUITS
from imperiale_env.core.rules import make_rules
from imperiale_env.reference.game import Game

# Hearts trump, AH turned.  The dealer holds K Q J of hearts (the turned AH completes them) and the four 7s;
# the elder the quarts major of spades and diamonds.
TIMING = make_deal(0, ["KH QH JH 7S 7H 7D 7C 10S 9S 10D 9D 10C", "KS QS JS AS 8S 10H 9H 8H KD QD JD AD"], "AH")

# Elder: quarts of S and C; dealer: quarts of H and D.  The trump suit decides who has the best sequence.
SEQUENCES_ELDER = "KS QS JS AS KC QC JC AC 10S 9D 8D 7D"
SEQUENCES_DEALER = "KH QH JH AH KD QD JD AD 9S 8S 9C 8C"


def dealer_to_play(game) -> bool:
    """The dealer is about to play his first card: every declaration of the deal has been made."""
    return game.decision.kind == "play" and game.current_player == game.state.deal.dealer


def declarations(game):
    """(kind, player) of each decision up to and including the dealer's first card, hiding everything."""
    seen = []
    while True:
        d = game.decision
        seen.append((d.question.kind if d.kind == "question" else d.kind, d.player))
        if dealer_to_play(game):
            return seen
        game.step(act.HIDE if d.kind == "question" else act.SINK if d.kind == "point" else d.legal[0])


# ---------------------------------------------------------------- worked example 4


def test_worked_example_4():
    # The non-dealer (2 impériales, 4 counters) scores 2 counters against the dealer (1 impériale, 5 counters).
    game = finish(start("foster", EX4, imperiales=[1, 2], points=[20, 16]), *EX4_PLAY)
    assert game.history[0].tricks == [5, 7]
    assert events(game) == [
        {"event": "tricks", "player": 1, "points": 8, "tricks": 7},
        {"event": "imperiale", "player": 1, "count": 1, "total": 3},
        {"event": "wipe", "player": 0, "points": 20},
    ]
    assert game.imperiales == [1, 3] and game.points == [0, 0]


# ---------------------------------------------------------------- chronology and timing


def test_point_first_then_elder_declares_leads_and_then_the_dealer_declares():
    game = start("foster", TIMING)
    assert declarations(game) == [
        ("point", 1), ("point", 0), ("quart_major", 1), ("quart_major", 1), ("play", 1),
        ("four_of_a_kind", 0), ("turned_imperiale", 0), ("play", 0),
    ]


def test_impériales_in_hand_are_scored_after_the_dealers_declarations():
    game = start("foster", TIMING)
    drive(game, show=True, stop=dealer_to_play)
    assert brief(game) == [
        ("turned_honour", 0, 4),
        ("quart_major", 1, 1), ("imperiale", 1, 1), ("quart_major", 1, 1), ("imperiale", 1, 1),
        ("four_of_a_kind", 0, 1), ("imperiale", 0, 1),
        ("turned_imperiale", 0, 1), ("imperiale", 0, 1),
    ]
    # Both showed impériales in hand: the dealer keeps his 4 points.
    assert game.points == [4, 0] and game.imperiales == [2, 2]


def test_nothing_in_hand_is_scored_before_the_dealer_answers():
    game = start("foster", TIMING)
    drive(game, show=True, stop=lambda g: g.current_player == 0 and g.decision.kind == "question")
    assert len(game.state.trick) == 1  # the elder has led
    assert brief(game) == [("turned_honour", 0, 4)]


def test_point_is_scored_before_the_impériales():
    game = start("foster", PROTECT, points=[8, 0])
    drive(game, show=lambda d: d.player == 1, points={1: "S"}, stop=dealer_to_play)
    assert brief(game) == [
        ("turned_honour", 0, 4), ("point", 1, 4), ("quart_major", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 12),
    ]


def test_no_protection_of_the_turned_honour():
    game = start("foster", PROTECT, points=[8, 0])
    drive(game, show=lambda d: d.player == 1, stop=dealer_to_play)
    assert brief(game) == [("turned_honour", 0, 4), ("quart_major", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 12)]
    assert game.points == [0, 0]


# ---------------------------------------------------------------- comparison by category


@pytest.mark.parametrize("turned, winner", [("7S", 1), ("10H", 0), ("10D", 0), ("10C", 1)])
def test_best_sequence_scores_all_its_holders_sequences(turned, winner):
    game = start("foster", by_role(0, SEQUENCES_ELDER, SEQUENCES_DEALER, turned))
    drive(game, show=True, stop=dealer_to_play)
    quarts = events(game, kind="quart_major")
    assert [(e["player"], e["imperiales"]) for e in quarts] == [(winner, 1), (winner, 1)]  # trump quart: 1 too
    assert game.imperiales[winner] == 2 and game.imperiales[1 - winner] == 0


@pytest.mark.parametrize("dealer", [0, 1])
def test_plain_quarts_tie_and_the_elder_wins(dealer):
    deal = by_role(dealer, "KS QS JS AS 9D 8D 7D 9C 8C 7C 9H 8H", "KD QD JD AD 10S 9S 8S 7S KC QC JC 10D", "10H")
    game = start("foster", deal)
    drive(game, show=True, stop=dealer_to_play)
    elder = 1 - dealer
    assert [(e["player"], e["cards"]) for e in events(game, kind="quart_major")] == [(elder, ["KS", "QS", "JS", "AS"])]
    assert game.imperiales[dealer] == 0


def four(rank: str) -> str:
    return " ".join(rank + s for s in SUITS)


@pytest.mark.parametrize(
    "elder, dealer, winner",
    [("7", "A", 0), ("A", "J", 0), ("J", "Q", 0), ("Q", "K", 0), ("K", "7", 1), ("A", "7", 1), ("K", "A", 1)],
)
def test_best_four_k_q_j_a_7(elder, dealer, winner):
    game = start("foster", by_role(0, four(elder), four(dealer), "9H"))
    wanted = {(1, RANKS.index(elder)), (0, RANKS.index(dealer))}
    drive(game, show=lambda d: d.question.kind == "four_of_a_kind" and (d.player, d.question.rank) in wanted,
          stop=dealer_to_play)
    scored = events(game, kind="four_of_a_kind")
    assert [e["player"] for e in scored] == [winner]
    assert scored[0]["cards"] == four(elder if winner == 1 else dealer).split()


def test_best_four_scores_all_its_holders_fours():
    game = start("foster", by_role(0, four("K"), four("Q") + " " + four("J"), "9H"))
    drive(game, show=True, stop=dealer_to_play)
    assert [(e["player"], e["cards"][0]) for e in events(game, kind="four_of_a_kind")] == [(1, "KS")]
    game = start("foster", by_role(0, four("A") + " " + four("7"), four("Q"), "9H"))
    drive(game, show=True, stop=dealer_to_play)
    assert [(e["player"], e["cards"][0]) for e in events(game, kind="four_of_a_kind")] == [(0, "QS")]


# ---------------------------------------------------------------- wipes when both show


def test_both_show_impériales_neither_wipes():
    game = start("foster", BOTH, points=[12, 8])
    drive(game, show=True, stop=dealer_to_play)
    assert brief(game) == [("quart_major", 1, 1), ("imperiale", 1, 1), ("four_of_a_kind", 0, 1), ("imperiale", 0, 1)]
    assert game.points == [12, 8]


@pytest.mark.parametrize("shower, wiped, points", [(1, 0, 12), (0, 1, 8)])
def test_only_one_shows_and_wipes(shower, wiped, points):
    game = start("foster", BOTH, points=[12, 8])
    drive(game, show=lambda d: d.player == shower, stop=dealer_to_play)
    assert brief(game)[-1] == ("wipe", wiped, points)
    assert game.points[wiped] == 0 and game.points[shower] == [12, 8][shower]


# ---------------------------------------------------------------- carte blanche


def test_carte_blanche_is_worth_one_and_the_deal_is_played():
    game = start("foster", CARTE_BLANCHE, points=[12, 8])
    drive(game, show=lambda d: d.question.kind == "carte_blanche", stop=dealer_to_play)
    assert brief(game) == [("carte_blanche", 1, 1), ("imperiale", 1, 1), ("wipe", 0, 12)]
    drive(game)
    assert game.history[0].tricks_played == 12


def test_carte_blanche_counts_as_shown_for_the_wipe_exception():
    game = start("foster", CARTE_BLANCHE, points=[12, 8])
    drive(game, show=lambda d: d.question.kind == "carte_blanche" or d.question.suit == 0, stop=dealer_to_play)
    assert brief(game) == [("carte_blanche", 1, 1), ("imperiale", 1, 1), ("quart_major", 0, 1), ("imperiale", 0, 1)]
    assert game.points == [12, 8]


# ---------------------------------------------------------------- turned-card impériale (on)


def test_turned_card_completes_the_dealers_four():
    game = start("foster", make_deal(0, ["7S 7D 7C", ""], "7H"))
    kinds = declarations(game)
    assert ("turned_imperiale", 0) in kinds and kinds.index(("turned_imperiale", 0)) > kinds.index(("play", 1))


def test_turned_imperiale_is_worth_one():
    game = start("foster", TIMING)
    drive(game, show=lambda d: d.question.kind == "turned_imperiale", stop=dealer_to_play)
    assert brief(game) == [("turned_honour", 0, 4), ("turned_imperiale", 0, 1), ("imperiale", 0, 1)]


def test_turned_imperiale_can_be_switched_off():
    game = start(make_rules("foster", turned_imperiale=False), TIMING)
    assert ("turned_imperiale", 0) not in declarations(game)


# ---------------------------------------------------------------- after play: tombée, honours, cards, capot


def test_tombee_then_honours_then_capot():
    game = finish(start("foster", TOMBEE), *TOMBEE_PLAY)
    assert game.history[0].tricks == [0, 12]
    assert brief(game) == [
        ("fallen_imperiale", 1, 1), ("imperiale", 1, 1), ("honours", 1, 20), ("capot", 1, 2), ("imperiale", 1, 2),
    ]


def test_no_tombee_when_the_jack_was_the_players_own():
    game = finish(start("foster", CAPTURE), *CAPTURE_PLAY)
    assert brief(game) == [("honours", 1, 20), ("capot", 1, 2), ("imperiale", 1, 2)]


def test_trick_difference():
    game = finish(start("foster", EX3), *EX3_PLAY)
    # 8 tricks against 4: 16 points, the 24th point with the honours
    assert brief(game) == [("honours", 1, 8), ("tricks", 1, 16), ("imperiale", 1, 1)]
    game = finish(start("foster", EVEN), *EVEN_PLAY)
    assert events(game) == []


def test_seeded_deals_score_the_trick_difference():
    seen = set()
    for game in seeded_single_deals(make_rules("foster", target_imperiales=99), range(40)):
        t = game.history[0].tricks
        assert [(e["player"], e["points"]) for e in events(game, kind="tricks")] == [
            (p, 4 * (t[p] - t[1 - p])) for p in priority(game) if t[1 - p] < t[p] < 12
        ]
        seen.add(abs(t[0] - t[1]))
    assert max(seen) > 0


# ---------------------------------------------------------------- the end of the game


def test_the_point_can_end_the_game_before_any_impériale():
    game = start("foster", PROTECT, imperiales=[0, 4], points=[0, 20])
    drive(game, show=True, points={1: "S"})
    assert brief(game) == [("turned_honour", 0, 4), ("point", 1, 4), ("imperiale", 1, 1), ("wipe", 0, 4),
                           ("game_over", 1, None)]
    assert game.current_player is None and [a for _, a in game.history[0].actions] == [act.point_action(0), act.SINK]


def test_the_dealers_declaration_can_end_the_game_after_the_first_lead():
    game = start("foster", TIMING, imperiales=[4, 0])
    drive(game, show=lambda d: d.player == 0, stop=lambda g: g.decision.kind == "question" and g.current_player == 0)
    play_before = len(game.state.trick)
    drive(game, show=lambda d: d.player == 0)
    assert play_before == 1 and game.is_over and game.winner == 0 and game.current_player is None
    assert [e[0] for e in brief(game)] == ["turned_honour", "four_of_a_kind", "imperiale", "game_over"]


def test_the_deal_alternates():
    game = drive(Game("foster", seed=2), stop=lambda g: len(g.history) > 3)
    d = game.start_dealer
    assert [h.deal.dealer for h in game.history[:4]] == [d, 1 - d, d, 1 - d]


# All hearts (trumps) out of the hands; the elder holds every spade and KD QD JD: 11 tricks against 1.
ELEVEN = make_deal(0, ["AD 10D 9D 8D 7D KC QC JC AC 10C 9C 8C", "KS QS JS AS 10S 9S 8S 7S KD QD JD 7C"], "10H")
ELEVEN_PLAY = ("KS 8C", "QS 9C", "JS 10C", "AS AC", "10S JC", "9S QC", "7S 7D", "8S 8D",
               "KD 9D", "QD 10D", "JD AD", "7C KC")


def test_one_award_can_make_two_imperiales():
    game = finish(start("foster", ELEVEN, points=[8, 20]), *ELEVEN_PLAY)
    assert game.history[0].tricks == [1, 11]
    assert brief(game) == [("tricks", 1, 40), ("imperiale", 1, 1), ("wipe", 0, 8), ("imperiale", 1, 1)]
    assert game.imperiales == [0, 2] and game.points == [0, 12]


def test_the_target_stops_an_award_midway():
    # The first of the two impériales is the fifth: the game ends and the rest of the award stays as points.
    game = finish(start("foster", ELEVEN, imperiales=[0, 4], points=[8, 20]), *ELEVEN_PLAY)
    assert brief(game) == [("tricks", 1, 40), ("imperiale", 1, 1), ("wipe", 0, 8), ("game_over", 1, None)]
    assert game.imperiales == [0, 5] and game.points == [0, 36]
