"""The batched numpy engine (moved into a package; see :mod:`.engine`)."""

from .engine import EVENT_KINDS, HISTORY_LEN, NONE, PLAY, POINT, POINTS_PER_IMPERIALE, QUESTION, BatchGame

__all__ = ["EVENT_KINDS", "HISTORY_LEN", "NONE", "PLAY", "POINT", "POINTS_PER_IMPERIALE", "QUESTION", "BatchGame"]
