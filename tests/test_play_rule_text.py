"""Why a player's cards are the legal ones: the reference engine names the clause of the rules
(:meth:`Game.play_rule`, the cards it allows are the legal plays) and narrate words it
(:func:`play_rule_text`, what the terminal's help and its refusals say).  One position per clause."""

from __future__ import annotations

import pytest
from helpers import drive, make_deal, play, start, until

from imperiale_env.core.rules import make_rules
from imperiale_env.records.narrate import play_rule_text

LEADER = "KS QS JS AS 10S 9S 8S 7S 6S AH 10H 9H"  # no trump (clubs)
SECOND = "9C 8C KH QH JH 8H 7H 6H KD QD JD AD"
THIRD = "KC QC JC AC 10C 7C 6C 10D 9D 8D 7D 6D"
BEAT_LEADER = "10S 8S 7S AH 10H 9H 8H 7H 6H AD 10D 9D"
BEAT_THIRD = "KS QS JS AS 9S 6S KC QC JC KD QD JD"


def three(rules, hands: list[str], cards: str = "", turned: str = "6C"):
    """Three players, seat 1 leads; ``cards`` played first."""
    game = start(make_rules("academie3") if rules is None else rules, make_deal(0, hands, turned))
    drive(game, stop=until("play"))
    play(game, cards)
    return game


POSITIONS = [
    ("lead", "You lead: any card may be led.", lambda: three(None, [THIRD, LEADER, SECOND])),
    ("lead_trump", "You lead the first trick and hold a trump: the first lead must be a trump (clubs).",
     lambda: three(None, ["KC QC JC AC 10C 9C 6C", "8C 7C 9S 8S 7S AH 10H 9H 8H 7H 6H AD", ""])),
    ("trump", "You have no spades: you must trump (clubs: 9C 8C).", lambda: three(None, [THIRD, LEADER, SECOND], "KS")),
    ("overtrump", "You have no spades: you must trump, and overtrump 9C (KC QC JC AC 10C).",
     lambda: three(None, [THIRD, LEADER, SECOND], "KS 9C")),
    ("cannot_overtrump", "You have no spades and cannot overtrump KC: any card may be played.",
     lambda: three(None, [THIRD.replace("KC", "9C"), LEADER, SECOND.replace("9C", "KC")], "KS KC")),
    ("beat", "You must follow suit (spades) and beat 10S if you can: play a higher spade (KS QS JS AS).",
     lambda: three(None, [BEAT_THIRD.replace("6S", "6C"), BEAT_LEADER, "6S KH QH JH 8D 7D 6D AC 10C 9C 8C 7C"],
                   "10S 6S")),
    ("follow_cannot_beat", "You must follow suit (spades); none of your spades beats 10S, so any spade will do.",
     lambda: three(None, [BEAT_THIRD.replace("6S", "6C"), BEAT_LEADER, "6S KH QH JH 8D 7D 6D AC 10C 9C 8C 7C"],
                   "10S")),
    ("follow", "You must follow suit (spades); the trick is trumped, so any spade will do.",
     lambda: three(None, [BEAT_THIRD, BEAT_LEADER, "KH QH JH 8D 7D 6D AC 10C 9C 8C 7C 6C"], "10S 6C", "JC")),
    ("follow", "You must follow suit (spades).",
     lambda: three(make_rules("academie3", must_beat=False),
                   [BEAT_THIRD.replace("6S", "6C"), BEAT_LEADER, "6S KH QH JH 8D 7D 6D AC 10C 9C 8C 7C"], "10S 6S")),
    ("discard", "You have no spades: any card may be played.",
     lambda: three(make_rules("academie3", must_trump=False), [THIRD, LEADER, SECOND], "KS")),
    ("discard", "You have no clubs and no trumps: any card may be played.",
     lambda: three(None, ["KC QC JC AC 10C 9C 6C", "8C 7C 9S 8S 7S AH 10H 9H 8H 7H 6H AD", ""], "8C")),
]


@pytest.mark.parametrize(("clause", "text", "position"), POSITIONS, ids=[f"{c}-{i}" for i, (c, _, _) in
                                                                           enumerate(POSITIONS)])
def test_each_clause_is_named_by_the_engine_and_worded_once(clause, text, position):
    game = position()
    p = game.current_player
    named, cards = game.play_rule(p)
    assert (named, cards) == (clause, game.legal_actions())
    hand = sorted(game.state.hands[p])
    if clause in ("lead", "discard", "cannot_overtrump"):
        assert cards == hand  # the clauses that leave every card
    else:
        assert len(cards) < len(hand)
    assert play_rule_text(game, p) == text
