"""Cards, suits and ranks of L'Impériale, and the two orders they are compared in.

A card is an integer ``suit * 9 + rank`` in ``0 .. 35``, where ``rank`` indexes
:data:`RANKS` in **trick order** (K Q J A 10 9 8 7 6, highest first).  Every engine,
record and observation uses this one numbering, so that a card index, a bit of a
hand mask and an action id for playing that card are the same number.

Two players use 32 cards (no sixes); three players use all 36.
"""

from __future__ import annotations

SUITS: tuple[str, ...] = ("S", "H", "D", "C")
SUIT_NAMES: tuple[str, ...] = ("spades", "hearts", "diamonds", "clubs")
RANKS: tuple[str, ...] = ("K", "Q", "J", "A", "10", "9", "8", "7", "6")
NUM_SUITS = 4
NUM_RANKS = 9
NUM_CARDS = NUM_SUITS * NUM_RANKS

K, Q, J, A, TEN, NINE, EIGHT, SEVEN, SIX = range(NUM_RANKS)

#: Strength in a trick: higher wins (K=8 ... 6=0).  The Ace ranks below the Jack.
TRICK_STRENGTH: tuple[int, ...] = tuple(NUM_RANKS - 1 - r for r in range(NUM_RANKS))
#: Value of a card for the point: A 11, K Q J 10, the others their number.
POINT_VALUE: tuple[int, ...] = (10, 10, 10, 11, 10, 9, 8, 7, 6)


def card(suit: int, rank: int) -> int:
    """The card index of ``rank`` (trick-order index) in ``suit``."""
    return suit * NUM_RANKS + rank


def suit_of(c: int) -> int:
    return c // NUM_RANKS


def rank_of(c: int) -> int:
    return c % NUM_RANKS


def low_rank(players: int) -> int:
    """The low card of the game: the 7 with two players, the 6 with three."""
    return SEVEN if players == 2 else SIX


def deck(players: int) -> list[int]:
    """The cards in play, in index order: 32 for two players, 36 for three."""
    ranks = range(NUM_RANKS) if players == 3 else range(SIX)
    return [card(s, r) for s in range(NUM_SUITS) for r in ranks]


#: The deal's layout in a shuffled pack, read by both engines, the records and OpenSpiel's chance
#: nodes: 12 cards a hand, dealt in priority order (dealer + 1 first); then, with two players, the
#: turned card (the 25th) and the talon; with three the turned card is the dealer's last (the 36th),
#: which stays in his hand.
HAND_SIZE = 12
#: The index of the turned card in the shuffled pack, by number of players (a tuple, for the kernels).
TURNED_INDEX: tuple[int, ...] = (-1, -1, 2 * HAND_SIZE, 3 * HAND_SIZE - 1)


def card_code(c: int) -> str:
    """``KH``, ``10S`` ... as written in docs/rules.md and in records."""
    return RANKS[rank_of(c)] + SUITS[suit_of(c)]


def parse_card(code: str) -> int:
    """Inverse of :func:`card_code`; raises ``ValueError`` naming what is allowed."""
    if not isinstance(code, str) or len(code) < 2:
        raise ValueError(f"not a card code: {code!r} (expected rank then suit, e.g. 'KH', '10S')")
    rank, suit = code[:-1].upper(), code[-1].upper()
    if rank not in RANKS or suit not in SUITS:
        raise ValueError(
            f"not a card code: {code!r} (ranks {' '.join(RANKS)}, suits {' '.join(SUITS)})"
        )
    return card(SUITS.index(suit), RANKS.index(rank))


def parse_suit(code: str) -> int:
    if code not in SUITS:
        raise ValueError(f"not a suit: {code!r} (allowed: {', '.join(SUITS)})")
    return SUITS.index(code)


def sort_for_display(cards: list[int] | set[int] | frozenset[int]) -> list[int]:
    """Cards grouped by suit (S H D C), highest in trick order first: how a hand is held."""
    return sorted(cards)
