"""Compiled (numba) kernels over uint64 bitmask hands: one implementation of the card, legality
and trick rules for every compiled hot path (the alpha-beta solver, the batched engine).

Every kernel is a scalar ``@njit(cache=True)`` function: a compiled caller (a loop over games
or a search) inlines it, and ``NUMBA_DISABLE_JIT=1`` runs the same code as plain Python (on
numpy scalars) for debugging.  The on-disk cache is keyed on every source of the package
(:mod:`~imperiale_env.kernels.numba_cache`).  The data stays numpy: a hand is a ``np.uint64`` with bit ``c``
for card ``c`` (the numbering of :mod:`imperiale_env.core.cards`).
"""

from imperiale_env.kernels.numba_cache import use_keyed_cache

use_keyed_cache()  # before any kernel is declared: the cache keyed on the sources they read

from imperiale_env.kernels.mask_ops import (  # noqa: E402  (after the cache is set)
    BIT,
    ONE,
    STRONGER,
    SUIT_MASK,
    ZERO,
    card_count,
    lowest_card,
    suit_cards,
)
from imperiale_env.kernels.trick_rules import beats, legal_plays, trick_honours, trick_winner  # noqa: E402

__all__ = [
    "BIT", "ONE", "STRONGER", "SUIT_MASK", "ZERO", "beats", "card_count", "legal_plays", "lowest_card",
    "suit_cards", "trick_honours", "trick_winner",
]
