"""The score events and declarations in words: the one narrator of the game.

:func:`explain_events` tells a deal's score events (the reference engine's event dicts, whose
kinds are those of :mod:`imperiale_env.core.events`) as sentences, folding into each the
impériales it makes, the points it wipes and the end of the game.  The human player is
spoken to in the second person (``You win the point``), the others in the third.  The
terminal game, the web table, the environments' table (:mod:`imperiale_env.envs.render_text`) and the
human agent all tell events through it; :func:`trick_text` and :func:`decision_note` tell a
trick and a declaration as the terminal game and ``imperiale replay`` print them, and
:func:`play_rule_text` the rule that makes a player's cards the legal ones
(:func:`decision_rule_text` the rule behind any decision: the terminal's ``help`` and the web
table's "Now:" line).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from imperiale_env.core import actions as act
from imperiale_env.core.cards import (
    POINT_VALUE,
    SUIT_NAMES,
    SUITS,
    card_code,
    parse_card,
    rank_of,
    sort_for_display,
    suit_of,
)
from imperiale_env.core.rules import Rules
from imperiale_env.reference.game import DealState, Decision, Game, Question, trick_winner_card

RANK_PLURALS = {"K": "Kings", "Q": "Queens", "J": "Jacks", "A": "Aces", "10": "tens", "9": "nines", "8": "eights",
                "7": "sevens", "6": "sixes"}


class Words:
    """Subjects, verbs and possessives in the second person for the human, the third for bots."""

    def __init__(self, names: Sequence[str], human: int):
        self.names, self.human = list(names), human

    def subj(self, p: int) -> str:
        return self.names[p]

    def verb(self, p: int, base: str, third: str | None = None) -> str:
        """``You win`` / ``Player 1 wins``."""
        if p == self.human:
            return f"{self.names[p]} {base}"
        return f"{self.names[p]} {third or base + 's'}"

    def poss(self, p: int) -> str:
        """``your`` / ``Player 1's``."""
        return "your" if p == self.human else f"{self.names[p]}'s"

    def obj(self, p: int) -> str:
        return "you" if p == self.human else self.names[p]

    def his(self, p: int) -> str:
        return "your" if p == self.human else "his"


def seat_names(players: int, human: int, bot: str | None = None) -> list[str]:
    """``You`` for the human seat; the bots by their spec (``champion``; ``pimc:16 (seat 2)`` when
    two bots play), or ``Player p`` when no spec is given.  The terminal, the web table and replays
    name the seats so."""
    if bot is None:
        return ["You" if p == human else f"Player {p}" for p in range(players)]
    return ["You" if p == human else bot if players == 2 else f"{bot} (seat {p})" for p in range(players)]


class EventsTold:
    """Which score events of each deal have been told to the person: a front end tells each event
    once, as soon as the move that scored it is answered (the terminal game, the web table)."""

    def __init__(self) -> None:
        self._told: dict[int, int] = {}  # deal index -> its events told so far

    def new(self, state: DealState) -> list[dict[str, Any]]:
        """The events of the deal ``state`` not told yet, now counted as told."""
        start = self._told.get(state.index, 0)
        self._told[state.index] = len(state.events)
        return state.events[start:]

    def pending(self, state: DealState) -> bool:
        """Whether the deal ``state`` has events not told yet."""
        return len(state.events) > self._told.get(state.index, 0)


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def imperiales(n: int) -> str:
    return plural(n, "impériale")


def cards_text(cards) -> str:
    return " ".join(card_code(c) for c in sort_for_display(list(cards)))


def _suit_of_codes(codes: Sequence[str]) -> int | None:
    suits = {c[-1] for c in codes}
    return SUITS.index(suits.pop()) if len(suits) == 1 else None


def item_text(kind: str, cards, trump: int, rules: Rules) -> str:
    """``a quart major in hearts, the trump suit``, ``four Kings``, ``carte blanche``."""
    cards = list(cards)
    codes = [c if isinstance(c, str) else card_code(c) for c in cards]
    codes = [card_code(c) for c in sort_for_display([parse_card(x) for x in codes])]
    if kind == "carte_blanche":
        return "carte blanche"
    if kind == "turned_imperiale":
        return "the turned-card impériale"
    if kind == "four_of_a_kind":
        rank = codes[0][:-1]
        return f"four {RANK_PLURALS[rank]}"
    suit = _suit_of_codes(codes)
    ranks = {c[:-1] for c in codes}
    name = "a quart major" if ranks == {"A", "K", "Q", "J"} else "a sequence " + " ".join(c[:-1] for c in codes)
    if suit is None:
        return name
    return f"{name} in {SUIT_NAMES[suit]}" + (", the trump suit" if suit == trump else "")


def question_text(question: Question, trump: int, rules: Rules, turned: int | None = None) -> str:
    """The pending question in words: ``Show your quart major in hearts (KH QH JH AH)? [show/hide]``."""
    cards = cards_text(question.cards)
    if question.kind == "carte_blanche":
        return f"Show your carte blanche (no K, Q or J: {cards})? [show/hide]"
    if question.kind == "turned_imperiale":
        what = card_code(turned) if turned is not None else cards
        return f"Show the turned-card impériale (the turned {what} completes your impériale)? [show/hide]"
    what = item_text(question.kind, question.cards, trump, rules)
    what = what.removeprefix("a ").removeprefix("an ")
    return f"Show your {what} ({cards})? [show/hide]"


def explain_events(events: Sequence[dict[str, Any]], rules: Rules, names: Sequence[str], human: int,
                   trump: int | None = None) -> list[str]:
    """One sentence per scoring event of the engine (a :class:`Game` deal's ``events``), with the
    impériales it makes, the points it wipes and the end of the game folded into it:
    ``Player 1 shows a quart major in spades: 1 impériale (1 in all); your 12 points are wiped``."""
    w = Words(names, human)
    out: list[str] = []
    last_gain = False  # the current sentence already says how many impériales

    def amount(e: dict[str, Any]) -> str:
        if "points" in e:
            return f"+{plural(int(e['points']), 'point')}"
        return imperiales(int(e.get("imperiales", 0)))

    def start(text: str) -> None:
        out.append(text)

    def add(text: str) -> None:
        if out:
            out[-1] += "; " + text
        else:
            out.append(text[0].upper() + text[1:])

    for e in events:
        kind, p = e["event"], int(e["player"])
        gain_kind = "imperiales" in e
        if kind == "turned_honour":
            start(f"The turned card {e.get('card', '')} is an honour: {w.verb(p, 'score')} "
                  f"{plural(int(e['points']), 'point')} as dealer")
        elif kind in ("carte_blanche", "quart_major", "four_of_a_kind"):
            what = item_text(kind, e.get("cards", []), trump if trump is not None else -1, rules)
            start(f"{w.verb(p, 'show')} {what}: {amount(e)}")
        elif kind == "turned_imperiale":
            start(f"{w.verb(p, 'show')} the turned-card impériale with {e.get('card', 'the turned card')}: "
                  f"{amount(e)}")
        elif kind == "point":
            suit = SUIT_NAMES[SUITS.index(e["suit"])] if "suit" in e else "a suit"
            start(f"{w.verb(p, 'win')} the point with {plural(int(e.get('count', 0)), 'card')} of {suit} "
                  f"worth {e.get('value', 0)} ({amount(e)})")
        elif kind == "honours":
            n = int(e.get("count", 0))
            where = "held in hand" if e.get("in_hand") else f"in {w.his(p)} tricks"
            start(f"{w.verb(p, 'count')} {plural(n, 'honour')} {where} ({amount(e)})")
        elif kind == "fallen_imperiale":
            start(f"{w.verb(p, 'take')} a fallen impériale: {amount(e)}")
        elif kind == "tricks":
            start(f"{w.verb(p, 'take')} {plural(int(e.get('tricks', 0)), 'trick')} ({amount(e)})")
        elif kind == "capot":
            start(f"{w.verb(p, 'make')} capot, all 12 tricks: {amount(e)}")
        elif kind == "imperiale":
            count, total = int(e.get("count", 1)), int(e.get("total", 0))
            if last_gain:
                out[-1] += f" ({total} in all)"
            else:
                add(f"24 points make {imperiales(count)} for {w.obj(p)} ({total} in all)")
        elif kind == "wipe":
            add(f"{w.poss(p)} {plural(int(e['points']), 'point')} "
                f"{'is' if int(e['points']) == 1 else 'are'} wiped")
        elif kind == "game_over":
            add("and you win the game!" if p == human else f"and {w.verb(p, 'win')} the game")
        else:  # a kind with no sentence of its own here is told by its name (core.events declares it)
            start(f"{w.verb(p, 'score')} {kind.replace('_', ' ')} ({amount(e)})")
        last_gain = gain_kind or (kind == "imperiale" and last_gain)
        if kind == "wipe":
            last_gain = False
    return [s[0].upper() + s[1:] + ("" if s.endswith("!") else ".") for s in out]


def why_trick_won(cards: list[tuple[int, int]], trump: int) -> tuple[int, int, str]:
    """``(winner, card, reason)`` of a complete trick ``cards`` (``(player, card)`` in play order):
    the reason a person reads, "trumped", "the highest trump" or "the highest of the suit led"."""
    best = trick_winner_card(cards, trump)
    winner = next(p for p, c in cards if c == best)
    led = suit_of(cards[0][1])
    if suit_of(best) == trump:
        return winner, best, "the highest trump" if led == trump else "trumped"
    return winner, best, "the highest of the suit led"


def trick_text(cards: list[tuple[int, int]], trump: int, words: Words) -> str:
    """A complete trick, who won it and why: ``Player 0 KS, Player 1 8H: Player 1 wins the trick (8H,
    trumped)`` (the terminal game's trick line and ``imperiale replay``'s)."""
    winner, best, reason = why_trick_won(cards, trump)
    played = ", ".join(f"{words.subj(q)} {card_code(c)}" for q, c in cards)
    return f"{played}: {words.verb(winner, 'win')} the trick ({card_code(best)}, {reason})"


def decision_note(game: Game, d: Decision, action: int, words: Words, rules: Rules) -> str | None:
    """What the other seats learn of ``action``, the answer to ``game``'s pending decision ``d``
    (read before the game steps): a shown item, a point declared with its count and value, a
    sunk point, a lead.  A hidden item is not told: it stays secret; a card that follows is told
    with its trick."""
    p = d.player
    s = game.state
    assert s is not None
    if d.kind == "question":
        if action != act.SHOW:
            return None
        q = d.question
        assert q is not None
        if q.kind == "turned_imperiale":
            return f"{words.verb(p, 'show')} the turned-card impériale ({card_code(s.deal.turned)})."
        return f"{words.verb(p, 'show')} {item_text(q.kind, q.cards, s.deal.trump, rules)} ({cards_text(q.cards)})."
    if d.kind == "point":
        if action == act.SINK:
            return f"{words.verb(p, 'sink')} the point."
        suit = action - act.POINT_BASE
        cards = [c for c in s.hands[p] if suit_of(c) == suit]
        value = sum(POINT_VALUE[rank_of(c)] for c in cards)
        return f"{words.verb(p, 'declare')} a point of {plural(len(cards), 'card')} worth {value}."
    if not s.trick:
        return f"{words.verb(p, 'lead')} {card_code(action)}."
    return None


def play_rule_text(game: Game, p: int) -> str:
    """Why ``p``'s legal cards are the legal ones now (follow suit, must beat, trump, overtrump),
    told to ``p``.  The engine decides: :meth:`Game.play_rule` names the clause of the rules that
    applies and the cards it allows, and this only words them."""
    s = game.state
    assert s is not None
    clause, cards = game.play_rule(p)
    trump = s.deal.trump
    tname = SUIT_NAMES[trump]
    if clause == "lead_trump":
        return f"You lead the first trick and hold a trump: the first lead must be a trump ({tname})."
    if clause == "lead":
        return "You lead: any card may be led."
    lname = SUIT_NAMES[suit_of(s.trick[0][1])]
    winning = card_code(trick_winner_card(s.trick, trump))
    if clause == "beat":
        return (f"You must follow suit ({lname}) and beat {winning} if you can: "
                f"play a higher {lname[:-1]} ({cards_text(cards)}).")
    if clause == "follow_cannot_beat":
        return f"You must follow suit ({lname}); none of your {lname} beats {winning}, so any {lname[:-1]} will do."
    if clause == "follow":  # under must_beat, a card of the suit led need not beat only a trumped trick
        if game.rules.must_beat:
            return f"You must follow suit ({lname}); the trick is trumped, so any {lname[:-1]} will do."
        return f"You must follow suit ({lname})."
    if clause == "overtrump":
        return f"You have no {lname}: you must trump, and overtrump {winning} ({cards_text(cards)})."
    if clause == "cannot_overtrump":
        return f"You have no {lname} and cannot overtrump {winning}: any card may be played."
    if clause == "trump":
        return f"You have no {lname}: you must trump ({tname}: {cards_text(cards)})."
    if any(suit_of(c) == trump for c in s.hands[p]):
        return f"You have no {lname}: any card may be played."
    return f"You have no {lname} and no trumps: any card may be played."


def point_rule_text(rules: Rules) -> str:
    """How the point is declared and won under ``rules``."""
    tie = "a tie goes to the elder" if rules.point_tie == "priority" else "a full tie is split"
    return (f"Declare one suit you hold, or sink (declare nothing; a sunk point never wins). The longest "
            f"suit wins, then the higher total (A 11, K Q J 10, the others their number); {tie}. "
            f"The winner scores {rules.point_points} points and shows the cards of that suit.")


QUESTION_RULE = ("Show it to score it now (it is revealed to everyone); hide it to keep your hand secret "
                 "(a hidden impériale is never scored later).")


def decision_rule_text(game: Game, p: int) -> str:
    """The rule behind ``p``'s pending decision, told to ``p``: which cards he may play and why, how the
    point is won, or what showing a declaration costs and gives."""
    d = game.decision
    assert d is not None and d.player == p
    if d.kind == "play":
        return play_rule_text(game, p)
    if d.kind == "point":
        return point_rule_text(game.rules)
    return QUESTION_RULE
