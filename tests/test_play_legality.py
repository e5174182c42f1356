"""Which cards may be played (docs/rules.md sections 4.5, 5, 7), and who wins a trick."""

from __future__ import annotations

import pytest
from helpers import cards, codes, drive, legal_codes, make_deal, play, start, until

from imperiale_env.core import actions as act
from imperiale_env.core.cards import parse_card
from imperiale_env.core.rules import make_rules
from imperiale_env.reference.game import IllegalActionError, priority_order, trick_winner_card

# ---------------------------------------------------------------- two players

# Clubs are trumps (8C turned, not an honour); the dealer (seat 0) follows the elder (seat 1).
FOLLOWER = "KH AH 8H KS QS JS 7S KD QD JD 7D 9C"


def sorted_codes(hand: str) -> list[str]:
    return codes(cards(hand))


def follow_two(rules, follower: str, lead: str, turned: str = "8C") -> list[str]:
    """The follower's legal cards after the elder leads ``lead`` (the elder holds the other cards)."""
    game = start(rules, make_deal(0, [follower, lead], turned))
    drive(game, stop=until("play"))
    assert game.current_player == 1
    play(game, lead)
    assert game.current_player == 0
    return legal_codes(game)


def test_worked_example_2_only_the_king_beats_the_jack():
    # docs/rules.md 9.2: clubs trump, the elder leads JH, the follower holds KH AH 8H: only KH.
    assert follow_two("academie", FOLLOWER, "JH") == ["KH"]


def test_the_ace_ranks_below_the_jack_in_play():
    # Without the king the follower cannot beat the jack: any heart.
    assert follow_two("academie", "AH 8H KS QS JS 7S KD QD JD 7D 9C 10C", "JH") == ["AH", "8H"]
    # ... but the ace beats the ten.
    assert follow_two("academie", "AH 8H KS QS JS 7S KD QD JD 7D 9C 10C", "10H") == ["AH"]


def test_must_beat_with_a_card_of_the_suit_led():
    assert follow_two("academie", FOLLOWER, "8D") == ["KD", "QD", "JD"]
    assert follow_two("academie", FOLLOWER, "AD") == ["KD", "QD", "JD"]


def test_must_follow_when_unable_to_beat():
    assert follow_two("academie", "KH AH 8H AS QS JS 7S QD JD 7D 9C 10C", "KD") == ["QD", "JD", "7D"]
    assert follow_two("academie", "KH AH 8H AS QS JS 7S KD QD JD 7D 9C", "KS") == ["QS", "JS", "AS", "7S"]


def test_must_beat_in_trumps_when_trumps_are_led():
    assert follow_two("academie", "KH AH 8H KS QS JS 7S KD QD JD AC 9C", "10C") == ["AC"]


def test_must_trump_when_void():
    hand = "KH AH 8H KS QS JS 7S 9S 10S AS 9C 10C"  # no diamond
    assert follow_two("academie", hand, "AD") == ["10C", "9C"]


def test_free_discard_when_void_without_trumps():
    hand = "KH AH 8H KS QS JS 7S AS 10S 9S 10H 9H"  # no diamond, no club
    assert follow_two("academie", hand, "KD") == sorted_codes(hand)
    hand = "KH AH 8H KS QS JS 7S AS 10S 9S KD QD"  # no trump, and trumps are led
    assert follow_two("academie", hand, "KC") == sorted_codes(hand)


def test_academie_has_no_first_lead_in_trumps():
    game = start("academie", make_deal(0, ["", "AC 10C 9C"], "8C"))
    drive(game, stop=until("play"))
    assert game.current_player == 1
    assert len(game.legal_actions()) == 12


def test_an_illegal_card_is_refused_with_the_alternatives():
    game = start("academie", make_deal(0, [FOLLOWER, "JH"], "8C"))
    drive(game, stop=until("play"))
    play(game, "JH")
    with pytest.raises(IllegalActionError) as info:
        game.step(parse_card("AH"))
    assert info.value.legal == [parse_card("KH")]
    with pytest.raises(IllegalActionError):
        game.step(act.SHOW)
    play(game, "KH")  # still the dealer's turn, and the king is accepted
    assert game.state.tricks == [1, 0]


def test_trick_winner_card():
    c = parse_card
    clubs = 3
    assert trick_winner_card([(1, c("JH")), (0, c("AH"))], clubs) == c("JH")
    assert trick_winner_card([(1, c("10H")), (0, c("AH"))], clubs) == c("AH")
    assert trick_winner_card([(1, c("KH")), (0, c("7C"))], clubs) == c("7C")
    assert trick_winner_card([(1, c("7H")), (0, c("KS"))], clubs) == c("7H")  # a discard never wins
    assert trick_winner_card([(1, c("KS")), (2, c("8C")), (0, c("9C"))], clubs) == c("9C")
    assert trick_winner_card([(1, c("6S")), (2, c("KD")), (0, c("7S"))], clubs) == c("7S")


def test_the_winner_of_a_trick_leads_the_next():
    game = start("academie", make_deal(0, [FOLLOWER, "JH"], "8C"))
    drive(game, stop=until("play"))
    play(game, "JH KH")
    assert game.state.tricks == [1, 0] and game.current_player == 0
    play(game, "9C")  # the dealer leads a trump
    assert game.current_player == 1


def test_priority_order():
    assert priority_order(0, 2) == [1, 0]
    assert priority_order(1, 2) == [0, 1]
    assert priority_order(0, 3) == [1, 2, 0]
    assert priority_order(2, 3) == [0, 1, 2]


# ---------------------------------------------------------------- three players (academie3)
# Clubs are trumps (the dealer, seat 0, shows 6C and keeps it); seat 1 leads, seat 2 is second,
# the dealer third.

OVER_LEADER = "KS QS JS AS 10S 9S 8S 7S 6S AH 10H 9H"
OVER_SECOND = "9C 8C KH QH JH 8H 7H 6H KD QD JD AD"
OVER_THIRD = "KC QC JC AC 10C 7C 6C 10D 9D 8D 7D 6D"


def three(rules, hands: list[str], turned: str = "6C"):
    game = start(rules, make_deal(0, hands, turned))
    drive(game, stop=until("play"))
    assert game.current_player == 1
    return game


def test_second_player_must_trump_and_third_must_overtrump():
    game = three("academie3", [OVER_THIRD, OVER_LEADER, OVER_SECOND])
    assert len(game.legal_actions()) == 12  # the leader holds no trump: free first lead
    play(game, "KS")
    assert legal_codes(game) == ["9C", "8C"]
    play(game, "9C")
    assert legal_codes(game) == ["KC", "QC", "JC", "AC", "10C"]
    play(game, "10C")
    assert game.state.tricks == [1, 0, 0]


def test_third_player_unable_to_overtrump_may_play_any_card():
    second = OVER_SECOND.replace("9C", "KC")
    third = OVER_THIRD.replace("KC", "9C")
    game = three("academie3", [third, OVER_LEADER, second])
    play(game, "KS KC")
    assert legal_codes(game) == sorted_codes(third)


# The leader holds 10S 8S 7S and no trump; the dealer holds the spades above and below the ten.
BEAT_LEADER = "10S 8S 7S AH 10H 9H 8H 7H 6H AD 10D 9D"
BEAT_THIRD = "KS QS JS AS 9S 6S KC QC JC KD QD JD"


def test_third_player_must_beat_an_untrumped_trick():
    second = "6S KH QH JH 8D 7D 6D AC 10C 9C 8C 7C"
    third = BEAT_THIRD.replace("6S", "6C")
    game = three("academie3", [third, BEAT_LEADER, second])
    play(game, "10S")
    assert legal_codes(game) == ["6S"]
    play(game, "6S")
    assert legal_codes(game) == ["KS", "QS", "JS", "AS"]  # not the 9


def test_no_obligation_to_beat_once_the_trick_is_trumped():
    second = "KH QH JH 8D 7D 6D AC 10C 9C 8C 7C 6C"
    game = three("academie3", [BEAT_THIRD, BEAT_LEADER, second], turned="JC")
    play(game, "10S")
    assert legal_codes(game) == ["AC", "10C", "9C", "8C", "7C", "6C"]
    play(game, "6C")
    assert legal_codes(game) == ["KS", "QS", "JS", "AS", "9S", "6S"]


def test_academie3_first_lead_must_be_a_trump():
    leader = "8C 7C 9S 8S 7S AH 10H 9H 8H 7H 6H AD"
    game = three("academie3", ["KC QC JC AC 10C 9C 6C", leader, ""])
    assert legal_codes(game) == ["8C", "7C"]
    play(game, "8C")
    second = game.state.hands[2]
    assert legal_codes(game) == codes(second)  # no club: any card
    play(game, "6D")
    assert legal_codes(game) == ["KC", "QC", "JC", "AC", "10C", "9C"]  # the dealer must beat 8C
    play(game, "9C")
    # The dealer won and leads the second trick: any card.
    assert game.current_player == 0
    assert len(game.legal_actions()) == 11


def test_academie3_first_lead_free_without_trumps():
    game = three("academie3", [OVER_THIRD, OVER_LEADER, OVER_SECOND])
    assert legal_codes(game) == sorted_codes(OVER_LEADER)
    game = three(make_rules("academie3", first_lead_trump=False), ["", "8C 7C", ""])
    assert len(game.legal_actions()) == 12


# ---------------------------------------------------------------- Imperijal


def test_imperijal_follow_suit_without_obligation_to_beat():
    assert follow_two("imperijal", FOLLOWER, "JH") == ["KH", "AH", "8H"]
    assert follow_two("imperijal", FOLLOWER, "8D") == ["KD", "QD", "JD", "7D"]


def test_imperijal_must_trump_when_void():
    hand = "KH AH 8H KS QS JS 7S 9S 10S AS 9C 10C"
    assert follow_two("imperijal", hand, "AD") == ["10C", "9C"]
    hand = "KH AH 8H KS QS JS 7S AS 10S 9S KD QD"
    assert follow_two("imperijal", hand, "KC") == sorted_codes(hand)


def test_imperijal_no_overtrump_obligation():
    game = three(make_rules("imperijal", players=3), [OVER_THIRD, OVER_LEADER, OVER_SECOND])
    play(game, "KS")
    assert legal_codes(game) == ["9C", "8C"]
    play(game, "9C")
    # Must trump, with any trump: higher or lower than the 9.
    assert legal_codes(game) == ["KC", "QC", "JC", "AC", "10C", "7C", "6C"]
