"""The observation of the acting player: one documented float32 vector for every preset.

Seats are **relative**: seat 0 is the acting player, seat 1 the next in seat order, seat 2
the one after (all zeros with two players).  Card blocks are 36 wide, indexed like the
cards (``suit * 9 + rank``, rank in trick order K Q J A 10 9 8 7 6).

==================  ====  ============================================================
block               size  content
==================  ====  ============================================================
hand                36    the cards the player holds now
played              108   cards each seat has played this deal (current trick included)
trick               108   cards on the table in the current trick, by seat
revealed            108   cards each seat showed (impériales in hand, the winning point)
turned              36    the turned card (three players: the dealer's shown trump card)
trump               4     trump suit S H D C
voids               12    suits each seat is known to lack (failed to follow), 3 x 4
phase               3     question / point / play
question_kind       5     carte_blanche, quart_major, sequence, four_of_a_kind, turned_imperiale
question_cards      36    the cards the pending question is about (the hand for carte blanche)
declared_point      12    per seat: declared, sunk, count / 12, value / 120
imperiales          3     per seat, / target
points              3     per seat, / 24
tricks              3     tricks won this deal per seat, / 12
dealer              3     one-hot seat of the dealer
leader              3     one-hot seat that led the current trick (zeros before the first lead)
progress            2     tricks played / 12, three players (1.0) or two (0.0)
==================  ====  ============================================================

The ordered history of decisions of the current deal is kept by the batched engine
(``BatchGame.history_actions`` / ``history_players``) for sequence models.
"""

from __future__ import annotations

import numpy as np

from imperiale_env.core.events import POINTS_PER_IMPERIALE

LAYOUT: tuple[tuple[str, int], ...] = (
    ("hand", 36),
    ("played", 108),
    ("trick", 108),
    ("revealed", 108),
    ("turned", 36),
    ("trump", 4),
    ("voids", 12),
    ("phase", 3),
    ("question_kind", 5),
    ("question_cards", 36),
    ("declared_point", 12),
    ("imperiales", 3),
    ("points", 3),
    ("tricks", 3),
    ("dealer", 3),
    ("leader", 3),
    ("progress", 2),
)

OFFSETS: dict[str, slice] = {}
_at = 0
for _name, _size in LAYOUT:
    OFFSETS[_name] = slice(_at, _at + _size)
    _at += _size
OBS_SIZE: int = _at

QUESTION_KINDS: tuple[str, ...] = ("carte_blanche", "quart_major", "sequence", "four_of_a_kind", "turned_imperiale")
PHASES: tuple[str, ...] = ("question", "point", "play")

#: The divisors of the count blocks, written once for both encoders (the reference and the
#: compiled one, which reads them by name from this record): a declared point's count and
#: value, the points (24 make an impériale), the tricks won and played.  The impériales are
#: divided by the rules' target.
SCALES = np.array([(12.0, 120.0, float(POINTS_PER_IMPERIALE), 12.0)],
                  dtype=[("point_count", np.float64), ("point_value", np.float64), ("points", np.float64),
                         ("tricks", np.float64)])
SCALES.flags.writeable = False
