"""The scalar reference engine: the whole game of L'Impériale, written to read like the rules.

This engine is the oracle every other engine is tested against; speed is not its job.
A :class:`Game` plays deal after deal until a player holds ``rules.target_imperiales``
impériales, and stops *at once* when that happens, even in the middle of a deal.

Each deal is a generator (:meth:`Game._deal`) that follows the chronology of docs/rules.md for
the preset, step by step, and ``yield``\\ s whenever a player must decide (section 8):
show or hide carte blanche and each impériale, declare a point suit or sink, play a card.
The scoring primitives ``award`` and ``gain`` of section 3 are :meth:`Game._award` and
:meth:`Game._gain`; every score change is logged as a score event (docs/records.md).

Decisions taken where the sources are silent (docs/rules.md section 11):

* Académie: a shown carte blanche or impériale is scored at once, when its question is
  answered; the turned honour's 4 points are protected from every gain of step 2 (carte
  blanche included).
* Foster: the elder answers the point, then his in-hand questions, then leads; the dealer
  answers his in-hand questions (and the turned-card impériale) after that lead.  All
  impériales in hand are then scored together: carte blanche, then sequences, then fours,
  then the turned-card impériale.  "Both players show impériales" (no wipe) means each
  showed at least one thing in hand, carte blanche included; the turned-card impériale,
  scored after the comparison, is not in hand and wipes as usual.
* Imperijal: all in-hand questions (and the turned-card impériale, counted as one of the
  dealer's impériales in the comparison by number) come before any of them is scored;
  chronology: turned honour, carte blanche, impériales, point, honours in hand, play,
  honours captured, tricks, capot, fallen impériale.  The fallen impériale needs the A and
  the low trump taken from another player (not the player's own cards).
* After the 12th trick with three players, capot means all 12 tricks.
* An award worth two impériales whose first reaches the target ends the game at once:
  the winner may keep 24 points or more, since nothing after the target is scored.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from imperiale_env.core import actions as act
from imperiale_env.core import events as ev
from imperiale_env.core.cards import (
    HAND_SIZE,
    NUM_SUITS,
    POINT_VALUE,
    SUITS,
    TRICK_STRENGTH,
    TURNED_INDEX,
    card,
    card_code,
    deck,
    rank_of,
    suit_of,
)
from imperiale_env.core.declarations import (
    POINTS_PER_CAPTURED_HONOUR,
    QUART_MAJOR_RANKS,
    InHand,
    has_carte_blanche,
    honour_cards,
    imperiale_value,
    in_hand_items,
    point_of,
    turned_imperiale_cards,
)
from imperiale_env.core.events import POINTS_PER_IMPERIALE
from imperiale_env.core.rules import Rules, rank_index, resolve_rules
from imperiale_env.core.shuffle import as_seeds, first_dealer, shuffled
from imperiale_env.core.tricks import TRICKS_PER_DEAL, trick_points

#: The score event of each item shown in hand (an Imperijal sequence scores as a quart major).
_ITEM_EVENTS = {"carte_blanche": ev.CARTE_BLANCHE, "quart_major": ev.QUART_MAJOR, "sequence": ev.QUART_MAJOR,
                "four_of_a_kind": ev.FOUR_OF_A_KIND}


class IllegalActionError(ValueError):
    """An action that is not legal now; ``legal`` lists the alternatives."""

    def __init__(self, message: str, legal: list[int]):
        super().__init__(message)
        self.legal = legal


@dataclass(frozen=True)
class Deal:
    """The cards of one deal: hands by seat, the turned card, the talon (two players).

    With three players ``turned`` is the dealer's last card and is also in his hand.
    """

    dealer: int
    hands: tuple[frozenset[int], ...]
    turned: int
    talon: tuple[int, ...] = ()

    @property
    def trump(self) -> int:
        return suit_of(self.turned)


def priority_order(dealer: int, players: int) -> list[int]:
    """Order of play and of every declaration: dealer+1, ..., dealer."""
    return [(dealer + 1 + i) % players for i in range(players)]


def deal_cards(rules: Rules, seed: int, deal_index: int, dealer: int) -> Deal:
    """The seeded deal ``deal_index`` of the game with ``seed`` (see :mod:`shuffle`).

    The shuffled pack is dealt in priority order, 12 cards each; with two players the
    25th card is turned and the last 7 are the talon, with three the dealer's last card
    (the 36th) is shown as trump.
    """
    order = shuffled(as_seeds(seed), np.array([deal_index]), np.array(deck(rules.players)))[0]
    return deal_from_order(order, dealer, rules.players)


def deal_from_order(order: Iterable[int], dealer: int, players: int) -> Deal:
    """The deal a card order lays out (:data:`~imperiale_env.core.cards.TURNED_INDEX`): the hands in
    priority order, then the turned card and, with two players, the talon (what follows it)."""
    order = [int(c) for c in order]
    hands: list[frozenset[int]] = [frozenset()] * players
    for i, p in enumerate(priority_order(dealer, players)):
        hands[p] = frozenset(order[i * HAND_SIZE : (i + 1) * HAND_SIZE])
    turned = TURNED_INDEX[players]
    return Deal(dealer, tuple(hands), order[turned], tuple(order[turned + 1 :]))


def order_of_deal(deal: Deal, players: int) -> list[int]:
    """A card order that lays out ``deal`` (:func:`deal_from_order`'s inverse; each hand sorted, the
    turned card at its index: with three players the dealer's last card)."""
    order: list[int] = []
    for seat in priority_order(deal.dealer, players):
        order += sorted(deal.hands[seat] - {deal.turned})
    return order + [deal.turned, *deal.talon]


@dataclass(frozen=True)
class Question:
    """The declaration question pending for a player: ``show`` or ``hide`` it."""

    kind: str  # carte_blanche | quart_major | sequence | four_of_a_kind | turned_imperiale
    cards: frozenset[int]
    suit: int | None = None
    rank: int | None = None


@dataclass
class Decision:
    """What the current player must decide: a question, the point, or a card."""

    player: int
    kind: str  # "question" | "point" | "play"
    legal: list[int]
    question: Question | None = None


@dataclass
class DealState:
    """Everything that changes during one deal."""

    deal: Deal
    index: int
    hands: list[set[int]]
    captured: list[set[int]]
    tricks: list[int]
    trick: list[tuple[int, int]] = field(default_factory=list)
    leader: int = 0
    tricks_played: int = 0
    shown: list[list[InHand]] = field(default_factory=list)
    turned_imperiale_shown: bool = False
    revealed: list[set[int]] = field(default_factory=list)
    declared_points: list[tuple[int, int] | None] = field(default_factory=list)
    actions: list[tuple[int, int]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    turned_honour_scored: bool = False
    protect_turned: bool = False


class _GameOver(Exception):
    """Raised inside the deal when a player reaches the target: nothing later is scored."""


class Game:
    """One game of L'Impériale under ``rules``, to the target number of impériales.

    ``seed`` fixes the first dealer and every deal.  ``dealer``, ``imperiales`` and
    ``points`` start the game from a given score (records, single-deal studies).
    ``deals`` replaces the seeded deals (replaying a record): a callable
    ``(deal_index, dealer) -> Deal | None``; ``None`` means no more deals are known, and the
    game then waits unfinished (:attr:`current_player` is ``None``).  ``single_deal`` ends
    the game after its first deal.
    """

    def __init__(
        self,
        rules: Rules | str | dict | None = None,
        seed: int = 0,
        *,
        dealer: int | None = None,
        imperiales: Iterable[int] | None = None,
        points: Iterable[int] | None = None,
        deals: Callable[[int, int], Deal | None] | None = None,
        single_deal: bool = False,
    ):
        self.rules = resolve_rules(rules)
        self.players = self.rules.players
        self.seed = seed
        self.start_dealer = int(first_dealer(as_seeds(seed), self.players)[0]) if dealer is None else dealer
        self.dealer = self.start_dealer
        self.imperiales = list(imperiales) if imperiales is not None else [0] * self.players
        self.points = list(points) if points is not None else [0] * self.players
        self.start_imperiales = list(self.imperiales)
        self.start_points = list(self.points)
        self._given_deals = deals
        self._deals = deals or self._seeded_deal
        self.single_deal = single_deal
        self.winner: int | None = None
        self.is_over = False
        self.history: list[DealState] = []
        self.state: DealState | None = None
        self._script: Generator[Decision, int, None] | None = None
        self.decision: Decision | None = None
        self._start_deal()

    def _seeded_deal(self, index: int, dealer: int) -> Deal:
        return deal_cards(self.rules, self.seed, index, dealer)

    # ------------------------------------------------------------------ copies

    def actions_so_far(self) -> list[int]:
        """Every action taken since the start, in order: with the constructor's arguments, the
        whole game (the engine's place inside a deal is a running generator, which cannot be copied)."""
        return [a for state in self.history for _, a in state.actions]

    def _start_arguments(self) -> dict[str, Any]:
        return {"rules": self.rules, "seed": self.seed, "dealer": self.start_dealer,
                "imperiales": list(self.start_imperiales), "points": list(self.start_points),
                "deals": self._given_deals, "single_deal": self.single_deal}

    def clone(self) -> Game:
        """An independent game equal to this one in every field and every future step: a new game
        from the same start, with every action so far replayed (as RLCard's ``step_back`` or
        OpenSpiel's ``clone`` are used; a deal of 12 tricks replays in well under a millisecond)."""
        return _replayed(self._start_arguments(), self.actions_so_far())

    def __deepcopy__(self, memo: dict) -> Game:
        return self.clone()

    def __reduce__(self):
        """Pickled as its start and its actions (the running generator cannot be pickled); a game
        replaying ``deals`` from a function pickles only if that function does."""
        return _replayed, (self._start_arguments(), self.actions_so_far())

    # ------------------------------------------------------------------ public API

    @property
    def current_player(self) -> int | None:
        return None if self.decision is None else self.decision.player

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids (empty when the game is over or out of deals)."""
        return [] if self.decision is None else list(self.decision.legal)

    def legal_mask(self) -> np.ndarray:
        mask = np.zeros(act.NUM_ACTIONS, dtype=bool)
        mask[self.legal_actions()] = True
        return mask

    def step(self, action: int) -> None:
        """Apply the current player's ``action``; raises :class:`IllegalActionError`."""
        if self.decision is None:
            raise IllegalActionError("the game is over: no action is legal", [])
        action = int(action)
        if action not in self.decision.legal:
            legal = ", ".join(act.describe(a) for a in self.decision.legal)
            what = act.describe(action) if 0 <= action < act.NUM_ACTIONS else str(action)
            raise IllegalActionError(
                f"player {self.decision.player} may not {what!r} now (legal: {legal})", self.decision.legal
            )
        assert self.state is not None and self._script is not None
        self.state.actions.append((self.decision.player, action))
        self._advance(action)

    def resume(self) -> None:
        """Start the next deal once ``deals`` knows it: a game fed deal by deal (OpenSpiel's chance
        outcomes) waits with no decision when its source had no deal yet, and goes on from here."""
        if self.decision is None and not self.is_over:
            self._start_deal()

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every score event of the game so far, each with its ``deal`` index."""
        return [dict(e, deal=s.index) for s in self.history for e in s.events]

    # ------------------------------------------------------------------ driving the deals

    def _start_deal(self) -> None:
        index = len(self.history)
        deal = self._deals(index, self.dealer)
        if deal is None:
            self.decision = None
            return
        P = self.players
        self.state = DealState(
            deal=deal,
            index=index,
            hands=[set(h) for h in deal.hands],
            captured=[set() for _ in range(P)],
            tricks=[0] * P,
            shown=[[] for _ in range(P)],
            revealed=[set() for _ in range(P)],
            declared_points=[None] * P,
            leader=priority_order(deal.dealer, P)[0],
        )
        self.history.append(self.state)
        self._script = self._deal()
        self._advance(None)

    def _advance(self, action: int | None) -> None:
        assert self._script is not None
        try:
            self.decision = self._script.send(action) if action is not None else next(self._script)
            return
        except StopIteration:
            pass
        except _GameOver:
            pass
        self.decision = None
        if self.is_over:
            return
        if self.single_deal:
            self.is_over = True
            return
        self.dealer = (self.dealer + 1) % self.players
        self._start_deal()

    # ------------------------------------------------------------------ score keeping (section 3)

    def _event(self, kind: str, player: int, **info: Any) -> None:
        assert self.state is not None and kind in ev.BY_NAME, kind
        self.state.events.append({"event": kind, "player": player, **info})

    def _award(self, p: int, n: int, kind: str, **info: Any) -> None:
        """award(p, n): n points; each 24 points become an impériale (remainder kept)."""
        self._event(kind, p, points=n, **info)
        self.points[p] += n
        while self.points[p] >= POINTS_PER_IMPERIALE:
            self.points[p] -= POINTS_PER_IMPERIALE
            self._gain(p, 1)

    def _gain(self, p: int, k: int, *, wipe: bool = True) -> None:
        """gain(p, k): k impériales; every opponent's points are wiped; the target ends the game."""
        assert self.state is not None
        self.imperiales[p] += k
        self._event(ev.IMPERIALE, p, count=k, total=self.imperiales[p])
        if wipe:
            for q in range(self.players):
                if q == p:
                    continue
                keep = 0
                if self.state.protect_turned and self.state.turned_honour_scored and q == self.state.deal.dealer:
                    keep = min(self.points[q], self.rules.turned_honour_points)
                if self.points[q] > keep:
                    self._event(ev.WIPE, q, points=self.points[q] - keep)
                    self.points[q] = keep
        if self.imperiales[p] >= self.rules.target_imperiales:
            self.is_over = True
            self.winner = p
            self._event(ev.GAME_OVER, p)
            raise _GameOver

    def _score_in_hand(self, p: int, item: InHand, *, wipe: bool = True) -> None:
        """Score one shown carte blanche or impériale in hand."""
        info: dict[str, Any] = {"cards": [card_code(c) for c in sorted(item.cards)]}
        kind = _ITEM_EVENTS[item.kind]
        if item.kind == "carte_blanche" and self.rules.carte_blanche_points:
            self._award(p, self.rules.carte_blanche_points, kind, **info)
            return
        value = imperiale_value(self.rules, item, self._trump)
        if self.rules.imperiales_as_points and item.kind != "carte_blanche":
            self._award(p, POINTS_PER_IMPERIALE * value, kind, **info)
            return
        self._event(kind, p, imperiales=value, **info)
        self._gain(p, value, wipe=wipe)

    # ------------------------------------------------------------------ the deal (chronology)

    @property
    def _trump(self) -> int:
        assert self.state is not None
        return self.state.deal.trump

    @property
    def _priority(self) -> list[int]:
        assert self.state is not None
        return priority_order(self.state.deal.dealer, self.players)

    def _deal(self) -> Generator[Decision, int, None]:
        self._score_turned_honour()
        chronology = self.rules.chronology
        if chronology == "academie":
            yield from self._academie_deal()
        elif chronology == "foster":
            yield from self._foster_deal()
        else:
            yield from self._imperijal_deal()

    def _score_turned_honour(self) -> None:
        """Step 1: a turned honour is worth points to the dealer."""
        s = self.state
        assert s is not None
        if s.deal.turned in honour_cards(self.rules, s.deal.trump) and self.rules.turned_honour_points:
            s.turned_honour_scored = True
            self._award(s.deal.dealer, self.rules.turned_honour_points, ev.TURNED_HONOUR, card=card_code(s.deal.turned))

    def _academie_deal(self) -> Generator[Decision, int, None]:
        s = self.state
        assert s is not None
        s.protect_turned = self.rules.protect_turned_honour
        for p in self._priority:
            for item in in_hand_items(self.rules, frozenset(s.hands[p])):
                if (yield from self._ask(p, item)):
                    self._score_in_hand(p, item)
        s.protect_turned = False
        if self.rules.carte_blanche_ends_deal and self._carte_blanche_shown():
            return
        if (yield from self._ask_turned_imperiale()):
            self._score_turned_imperiale()
        yield from self._point()
        yield from self._play()
        self._score_honours()
        self._score_fallen_imperiale()
        self._score_tricks()

    def _foster_deal(self) -> Generator[Decision, int, None]:
        s = self.state
        assert s is not None
        elder, dealer = self._priority[0], s.deal.dealer
        yield from self._point()
        yield from self._ask_all_in_hand(elder)
        if self.rules.declaration_timing == "dealer_after_first_lead":
            yield from self._play_card(elder)
        yield from self._ask_all_in_hand(dealer)
        turned = yield from self._ask_turned_imperiale()
        self._score_compared_in_hand()
        if turned:
            self._score_turned_imperiale()
        yield from self._play()
        self._score_fallen_imperiale()
        self._score_honours()
        self._score_tricks()

    def _imperijal_deal(self) -> Generator[Decision, int, None]:
        for p in self._priority:
            yield from self._ask_all_in_hand(p)
        yield from self._ask_turned_imperiale()
        for p in self._priority:
            for item in self.state.shown[p]:
                if item.kind == "carte_blanche":
                    self._score_in_hand(p, item)
        self._score_by_number()
        yield from self._point()
        self._score_honours_in_hand()
        if self.rules.carte_blanche_ends_deal and self._carte_blanche_shown():
            return
        yield from self._play()
        self._score_honours()
        self._score_tricks()
        self._score_fallen_imperiale()

    # ------------------------------------------------------------------ declarations in hand

    def _ask(self, p: int, item: InHand) -> Generator[Decision, int, bool]:
        """Put one show/hide question to ``p``; a shown item is revealed to all."""
        s = self.state
        assert s is not None
        q = Question(item.kind, item.cards, item.suit, item.rank)
        answer = yield Decision(p, "question", [act.SHOW, act.HIDE], q)
        if answer != act.SHOW:
            return False
        s.shown[p].append(item)
        s.revealed[p] |= item.cards
        return True

    def _ask_all_in_hand(self, p: int) -> Generator[Decision, int, None]:
        for item in in_hand_items(self.rules, frozenset(self.state.hands[p])):
            yield from self._ask(p, item)

    def _carte_blanche_shown(self) -> bool:
        return any(i.kind == "carte_blanche" for items in self.state.shown for i in items)

    def _ask_turned_imperiale(self) -> Generator[Decision, int, bool]:
        """Step 3 (when the rules have it): does the dealer show the turned-card impériale?"""
        s = self.state
        assert s is not None
        dealer = s.deal.dealer
        if not self.rules.turned_imperiale:
            return False
        held = turned_imperiale_cards(self.rules, frozenset(s.hands[dealer]), s.deal.turned)
        if held is None:
            return False
        q = Question("turned_imperiale", frozenset([s.deal.turned]), s.deal.trump, rank_of(s.deal.turned))
        answer = yield Decision(dealer, "question", [act.SHOW, act.HIDE], q)
        s.turned_imperiale_shown = answer == act.SHOW
        if s.turned_imperiale_shown:  # shown like an impériale in hand: the three cards it completes
            s.revealed[dealer] |= held
        return s.turned_imperiale_shown

    def _score_turned_imperiale(self) -> None:
        s = self.state
        info = {"card": card_code(s.deal.turned)}
        if self.rules.imperiales_as_points:
            self._award(s.deal.dealer, POINTS_PER_IMPERIALE, ev.TURNED_IMPERIALE, **info)
        else:
            self._event(ev.TURNED_IMPERIALE, s.deal.dealer, imperiales=1, **info)
            self._gain(s.deal.dealer, 1)

    def _score_compared_in_hand(self) -> None:
        """Foster: carte blanche, then the best sequence's holder scores all his sequences,
        then likewise for fours; if both players showed, these gains wipe no one."""
        s = self.state
        wipe = not (self.rules.mutual_show_no_wipe and all(s.shown[p] for p in range(self.players)))
        for p in self._priority:
            for item in s.shown[p]:
                if item.kind == "carte_blanche":
                    self._score_in_hand(p, item, wipe=wipe)
        four_order = [rank_index(n, self.players) for n in self.rules.four_ranks]
        categories: list[tuple[Callable[[InHand], bool], Callable[[InHand], tuple]]] = [
            (lambda i: i.is_sequence, lambda i: (i.kind == "quart_major", i.suit == self._trump)),
            (lambda i: i.kind == "four_of_a_kind", lambda i: (-four_order.index(i.rank),)),
        ]
        for belongs, strength in categories:
            best: tuple[tuple, int] | None = None
            for rank_in_priority, p in enumerate(self._priority):
                for item in filter(belongs, s.shown[p]):
                    key = (strength(item), -rank_in_priority)
                    if best is None or key > best[0]:
                        best = (key, p)
            if best is None:
                continue
            winner = best[1]
            for item in filter(belongs, s.shown[winner]):
                self._score_in_hand(winner, item, wipe=wipe)

    def _score_by_number(self) -> None:
        """Imperijal: the player(s) who showed the most impériales score 24 points each."""
        s = self.state
        counts = [sum(i.kind != "carte_blanche" for i in s.shown[p]) for p in range(self.players)]
        if s.turned_imperiale_shown:
            counts[s.deal.dealer] += 1
        most = max(counts)
        leaders = [p for p in self._priority if counts[p] == most]
        if most == 0 or len(leaders) == self.players:
            return
        for p in leaders:
            for item in s.shown[p]:
                if item.kind != "carte_blanche":
                    self._score_in_hand(p, item)
            if p == s.deal.dealer and s.turned_imperiale_shown:
                self._score_turned_imperiale()

    # ------------------------------------------------------------------ point (step 4)

    def _point(self) -> Generator[Decision, int, None]:
        """Each player declares one suit he holds or sinks; the best point scores."""
        s = self.state
        assert s is not None
        for p in self._priority:
            suits = sorted({suit_of(c) for c in s.hands[p]})
            answer = yield Decision(p, "point", [act.point_action(x) for x in suits] + [act.SINK])
            if answer != act.SINK:
                suit = answer - act.POINT_BASE
                s.declared_points[p] = (suit, *point_of(frozenset(s.hands[p]), suit))
        declared = [(p, s.declared_points[p]) for p in self._priority if s.declared_points[p] is not None]
        if not declared:
            return
        best = max(d[1:] for _, d in declared)
        leaders = [p for p, d in declared if d[1:] == best]
        if self.rules.point_tie == "priority" or len(leaders) == 1:
            winners, points = leaders[:1], self.rules.point_points
        else:
            winners, points = leaders, self.rules.point_points // 2
        for p in winners:
            suit, count, value = s.declared_points[p]
            cards = {c for c in s.hands[p] if suit_of(c) == suit}
            s.revealed[p] |= cards
            self._award(p, points, ev.POINT, suit=SUITS[suit], count=count, value=value)

    def _score_honours_in_hand(self) -> None:
        """Imperijal: honours held in hand at the declaration."""
        if not self.rules.honours_in_hand_points:
            return
        honours = honour_cards(self.rules, self._trump)
        for p in self._priority:
            n = len(honours & self.state.hands[p])
            if n:
                self._award(p, self.rules.honours_in_hand_points * n, ev.HONOURS, count=n, in_hand=True)

    # ------------------------------------------------------------------ play (step 5)

    def legal_plays(self, p: int) -> list[int]:
        """The cards ``p`` may play to the current trick (section 4 step 5)."""
        return self.play_rule(p)[1]

    def play_rule(self, p: int) -> tuple[str, list[int]]:
        """The clause of section 4 step 5 that decides ``p``'s cards now, and the cards it allows
        (:func:`play_rule_of`)."""
        s = self.state
        assert s is not None
        trump = self._trump
        led, winning = (s.trick[0][1], trick_winner_card(s.trick, trump)) if s.trick else (-1, -1)
        return play_rule_of(self.rules, s.hands[p], trump, led, winning, s.tricks_played == 0)

    def _play_card(self, p: int) -> Generator[Decision, int, None]:
        s = self.state
        assert s is not None
        c = yield Decision(p, "play", self.legal_plays(p))
        s.hands[p].discard(c)
        s.trick.append((p, c))
        if len(s.trick) == self.players:
            winner = next(q for q, x in s.trick if x == trick_winner_card(s.trick, self._trump))
            s.captured[winner] |= {x for _, x in s.trick}
            s.tricks[winner] += 1
            s.tricks_played += 1
            s.trick = []
            s.leader = winner

    def _play(self) -> Generator[Decision, int, None]:
        """The tricks: the elder leads the first, each trick's winner leads the next."""
        s = self.state
        assert s is not None
        while s.tricks_played < TRICKS_PER_DEAL:
            turn = s.leader if not s.trick else (s.trick[-1][0] + 1) % self.players
            yield from self._play_card(turn)

    # ------------------------------------------------------------------ after the 12th trick (step 6)

    def _score_honours(self) -> None:
        honours = honour_cards(self.rules, self._trump)
        for p in self._priority:
            n = len(honours & self.state.captured[p])
            if n:
                self._award(p, POINTS_PER_CAPTURED_HONOUR * n, ev.HONOURS, count=n)

    def _score_fallen_imperiale(self) -> None:
        s = self.state
        trump, mode = self._trump, self.rules.fallen_imperiale
        if mode == "off":
            return
        for p in self._priority:
            dealt = s.deal.hands[p]
            held_kq = card(trump, QUART_MAJOR_RANKS[1]) in dealt and card(trump, QUART_MAJOR_RANKS[2]) in dealt
            if mode == "tricks":
                fallen = all(card(trump, r) in s.captured[p] for r in QUART_MAJOR_RANKS)
            elif mode == "tombee":
                others = set().union(*(s.deal.hands[q] for q in range(self.players) if q != p))
                wanted = {card(trump, rank_index("J", 2)), card(trump, rank_index("A", 2))}
                fallen = held_kq and wanted <= others and wanted <= s.captured[p]
            else:
                wanted = {card(trump, rank_index("A", self.players)), card(trump, rank_index("low", self.players))}
                fallen = held_kq and not (wanted & dealt) and wanted <= s.captured[p]
            if not fallen:
                continue
            if self.rules.imperiales_as_points:
                self._award(p, POINTS_PER_IMPERIALE, ev.FALLEN_IMPERIALE)
            else:
                self._event(ev.FALLEN_IMPERIALE, p, imperiales=1)
                self._gain(p, 1)

    def _score_tricks(self) -> None:
        """The cards: tricks over the quota (or over the other player's), or capot, as the trick table
        of :func:`~imperiale_env.core.tricks.trick_points` says (the batched engine and the solvers
        read the same table)."""
        s = self.state
        for p in self._priority:
            score = trick_points(self.rules, s.tricks[p])
            if score.capot_imperiales:
                self._event(ev.CAPOT, p, imperiales=score.capot_imperiales)
                self._gain(p, score.capot_imperiales)
                continue
            if score.points:
                self._award(p, score.points, ev.TRICKS, tricks=s.tricks[p])
            if score.capot_points:
                self._award(p, score.capot_points, ev.CAPOT)


def play_rule_of(rules: Rules, hand: Iterable[int], trump: int, led: int, winning: int,
                 first_trick: bool) -> tuple[str, list[int]]:
    """The clause of section 4 step 5 that decides which cards of ``hand`` may be played, and those
    cards: ``lead``, ``lead_trump`` (the first lead must be a trump), ``beat`` (follow with a higher
    card), ``follow_cannot_beat``, ``follow``, ``overtrump``, ``cannot_overtrump``, ``trump`` or
    ``discard`` (no card of the suit led, any card).  ``led``: the trick's first card, -1 when the
    player leads; ``winning``: the card winning the trick so far.  The clause is named here, where
    it applies, so that the terminal's explanation (:func:`imperiale_env.records.narrate.play_rule_text`)
    never decides legality again; the reference observation reads its proofs of absence here too."""
    hand = list(hand)
    if led < 0:
        if rules.first_lead_trump and first_trick:
            trumps = [c for c in hand if suit_of(c) == trump]
            if trumps:
                return "lead_trump", sorted(trumps)
        return "lead", sorted(hand)
    led_suit = suit_of(led)
    follow = [c for c in hand if suit_of(c) == led_suit]
    if follow:
        if rules.must_beat and suit_of(winning) == led_suit:
            higher = [c for c in follow if TRICK_STRENGTH[rank_of(c)] > TRICK_STRENGTH[rank_of(winning)]]
            if higher:
                return "beat", sorted(higher)
            return "follow_cannot_beat", sorted(follow)
        return "follow", sorted(follow)
    trumps = [c for c in hand if suit_of(c) == trump]
    if trumps and rules.must_trump:
        if rules.overtrump and suit_of(winning) == trump:
            over = [c for c in trumps if TRICK_STRENGTH[rank_of(c)] > TRICK_STRENGTH[rank_of(winning)]]
            return ("overtrump", sorted(over)) if over else ("cannot_overtrump", sorted(hand))
        return "trump", sorted(trumps)
    return "discard", sorted(hand)


def trick_winner_card(trick: list[tuple[int, int]], trump: int) -> int:
    """The card winning ``trick`` so far: the highest trump, else the highest of the led suit."""
    led = suit_of(trick[0][1])
    cards = [c for _, c in trick]
    trumps = [c for c in cards if suit_of(c) == trump]
    pool = trumps or [c for c in cards if suit_of(c) == led]
    return max(pool, key=lambda c: TRICK_STRENGTH[rank_of(c)])


__all__ = [
    "Deal",
    "Decision",
    "Game",
    "IllegalActionError",
    "Question",
    "deal_cards",
    "has_carte_blanche",
    "play_rule_of",
    "priority_order",
    "trick_winner_card",
    "NUM_SUITS",
    "POINT_VALUE",
    "POINTS_PER_IMPERIALE",
]


def _replayed(start: dict[str, Any], actions: list[int]) -> Game:
    """The game started with ``start`` (``Game``'s arguments) after ``actions``."""
    game = Game(**start)
    for action in actions:
        game.step(action)
    return game
