"""Compiled (numba) kernels over uint64 bitmask hands: one implementation of the card, legality
and trick rules for every compiled hot path (the alpha-beta solver, the batched engine).

Every kernel is a scalar ``@njit(cache=True)`` function: a compiled caller (a loop over games
or a search) inlines it, and ``NUMBA_DISABLE_JIT=1`` runs the same code as plain Python (on
numpy scalars) for debugging.  The data stays numpy: a hand is a ``np.uint64`` with bit ``c``
for card ``c`` (the numbering of :mod:`imperiale_env.core.cards`).
"""

from imperiale_env.kernels.mask_ops import BIT, ONE, STRONGER, SUIT_MASK, ZERO, card_count, lowest_card, suit_cards
from imperiale_env.kernels.trick_rules import beats, legal_plays, trick_honours, trick_winner

__all__ = [
    "BIT", "ONE", "STRONGER", "SUIT_MASK", "ZERO", "beats", "card_count", "legal_plays", "lowest_card",
    "suit_cards", "trick_honours", "trick_winner",
]
