"""What a hand can declare: carte blanche, impériales in hand, the turned-card impériale,
and the point.  Pure functions of the cards, shared by the reference engine and the tests.

The **canonical order** of the declaration questions put to a player (docs/records.md#actions) is:
carte blanche first, then quarts major (A K Q J) by suit S H D C, then the Imperijal
sequences Q J A low by suit S H D C (when ``extra_sequence``), then fours of a kind in the
order of ``rules.four_ranks`` (K Q J A low by default).  The turned-card impériale is a
separate question to the dealer, at its place in the chronology.
"""

from __future__ import annotations

from dataclasses import dataclass

from imperiale_env.core.cards import NUM_SUITS, POINT_VALUE, A, J, K, Q, card, low_rank, rank_of, suit_of
from imperiale_env.core.rules import Rules, rank_index

#: Points for each trump honour a player holds among the cards of the tricks he won (docs/rules.md,
#: after the play): the reference engine, the batched engine and both solvers read it here.
POINTS_PER_CAPTURED_HONOUR = 4

#: The in-hand items a player may show, as numbered slots (bit ``j`` of the batched engine's item
#: masks, column ``j`` of the observation's ``shown_items``): carte blanche, the quart major of each
#: suit S H D C, the Imperijal sequence of each suit, the fours in ``rules.four_ranks`` order (the
#: canonical question order above).
CB_ITEM = 0
QUART_ITEMS = range(1, 5)
SEQUENCE_ITEMS = range(5, 9)
FOUR_ITEMS_START = 9
NUM_ITEMS = 14

QUART_MAJOR_RANKS = (A, K, Q, J)


def sequence_ranks(players: int) -> tuple[int, ...]:
    """The Imperijal extra sequence Q J A low."""
    return (Q, J, A, low_rank(players))


@dataclass(frozen=True)
class InHand:
    """One thing a player may show at the start of the deal.

    ``kind`` is ``carte_blanche``, ``quart_major``, ``sequence`` (Q J A low) or
    ``four_of_a_kind``; ``suit`` is set for the sequences, ``rank`` for the fours.
    """

    kind: str
    cards: frozenset[int]
    suit: int | None = None
    rank: int | None = None

    @property
    def is_sequence(self) -> bool:
        return self.kind in ("quart_major", "sequence")


def has_carte_blanche(hand: frozenset[int]) -> bool:
    """No K, Q or J among the cards."""
    return all(rank_of(c) not in (K, Q, J) for c in hand)


def in_hand_items(rules: Rules, hand: frozenset[int]) -> list[InHand]:
    """Everything the hand may show, in canonical question order."""
    items: list[InHand] = []
    if has_carte_blanche(hand):
        items.append(InHand("carte_blanche", frozenset(hand)))
    for s in range(NUM_SUITS):
        cards = frozenset(card(s, r) for r in QUART_MAJOR_RANKS)
        if cards <= hand:
            items.append(InHand("quart_major", cards, suit=s))
    if rules.extra_sequence:
        for s in range(NUM_SUITS):
            cards = frozenset(card(s, r) for r in sequence_ranks(rules.players))
            if cards <= hand:
                items.append(InHand("sequence", cards, suit=s))
    for name in rules.four_ranks:
        r = rank_index(name, rules.players)
        cards = frozenset(card(s, r) for s in range(NUM_SUITS))
        if cards <= hand:
            items.append(InHand("four_of_a_kind", cards, rank=r))
    return items


def imperiale_value(rules: Rules, item: InHand, trump: int) -> int:
    """Impériales an item is worth: a quart in trumps may be worth more (Académie: 2)."""
    if item.kind == "quart_major" and item.suit == trump:
        return rules.trump_quart_imperiales
    if item.kind == "carte_blanche":
        return rules.carte_blanche_imperiales
    return 1


def turned_imperiale_cards(rules: Rules, hand: frozenset[int], turned: int) -> frozenset[int] | None:
    """The three cards of the dealer's hand that the turned card completes into an impériale,
    or ``None``.  Showing the turned-card impériale shows these (the sources: it is announced
    and shown before the point, like the impériales in hand).

    The turned card is always a trump, so it completes a quart major of trumps, an
    Imperijal sequence of trumps, or a four of its rank; where it completes more than one,
    the first in that order is the one shown.
    """
    trump, r = suit_of(turned), rank_of(turned)
    groups: list[list[int]] = [[card(trump, x) for x in QUART_MAJOR_RANKS]]
    if rules.extra_sequence:
        groups.append([card(trump, x) for x in sequence_ranks(rules.players)])
    if rules.turned_imperiale_fours and r in [rank_index(n, rules.players) for n in rules.four_ranks]:
        groups.append([card(s, r) for s in range(NUM_SUITS)])
    for cards in groups:
        held = frozenset(c for c in cards if c != turned)
        if turned in cards and held <= hand:
            return held
    return None


def point_of(hand: frozenset[int], suit: int) -> tuple[int, int]:
    """(number of cards, total value) of the hand's cards in ``suit``."""
    cards = [c for c in hand if suit_of(c) == suit]
    return len(cards), sum(POINT_VALUE[rank_of(c)] for c in cards)


def honour_cards(rules: Rules, trump: int) -> frozenset[int]:
    """The honours: the trump cards of ``rules.honour_ranks``."""
    return frozenset(card(trump, rank_index(n, rules.players)) for n in rules.honour_ranks)


def honour_masks(rules: Rules) -> tuple[int, ...]:
    """:func:`honour_cards` as a bitmask (bit ``c`` for card ``c``) for each trump suit 0..3: the
    batched engine's tables, both solvers and the agents' view read the honours here."""
    return tuple(sum(1 << c for c in honour_cards(rules, trump)) for trump in range(NUM_SUITS))
