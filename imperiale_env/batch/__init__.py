"""The batched engine: N games of L'Impériale stepped together (see :mod:`.engine`).

Modules: :mod:`.state` (the arrays, per game and per deal), :mod:`.tables` (the stages and
card tables of the rules), :mod:`.stages` (the compiled stage machine: the decisions, dealing
and scoring), :mod:`.play` (the legal actions), :mod:`.observe` (the observation encoder), :mod:`.engine`
(:class:`BatchGame`).
"""

from ..events import EVENT_KINDS, POINTS_PER_IMPERIALE
from .engine import BatchGame
from .state import HISTORY_LEN, NONE, PLAY, POINT, QUESTION, BatchState
from .tables import Stage, build_stages

__all__ = [
    "EVENT_KINDS", "HISTORY_LEN", "NONE", "PLAY", "POINT", "POINTS_PER_IMPERIALE", "QUESTION", "BatchGame",
    "BatchState", "Stage", "build_stages",
]
