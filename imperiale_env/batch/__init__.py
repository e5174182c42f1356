"""The batched engine: N games of L'Impériale stepped together (see :mod:`.engine`).

Modules: :mod:`.state` (the arrays, per game and per deal), :mod:`.tables` (the stages and
card tables of the rules), :mod:`.stages` (the compiled stage machine: the decisions, dealing
and scoring), :mod:`.card_play` (the legal actions), :mod:`.observe` (the observation encoder), :mod:`.engine`
(:class:`BatchGame`).
"""

from imperiale_env.batch.engine import BatchGame
from imperiale_env.batch.state import HISTORY_LEN, NONE, PLAY, POINT, QUESTION, BatchState
from imperiale_env.batch.tables import Stage, build_stages
from imperiale_env.core.events import EVENT_KINDS, POINTS_PER_IMPERIALE

__all__ = [
    "EVENT_KINDS", "HISTORY_LEN", "NONE", "PLAY", "POINT", "POINTS_PER_IMPERIALE", "QUESTION", "BatchGame",
    "BatchState", "Stage", "build_stages",
]
