"""The legal actions of the batched engine, through the compiled loops of
:mod:`imperiale_env.batch.card_play_kernels` on the batch state's own arrays (the cards themselves are
played by the compiled step, :mod:`.stages`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from imperiale_env.batch import card_play_kernels as batch_play
from imperiale_env.batch.state import BatchState


def _loop(n: int, threads: int, plain: Any, threaded: Any) -> tuple[Any, tuple[int, ...]]:
    """The kernel to call and its leading arguments: the whole batch on one thread, or a slice a thread."""
    return (plain, (0, n)) if threads == 1 else (threaded, (threads,))


def action_bits(s: BatchState, r: np.ndarray, threads: int) -> np.ndarray:
    """The legal actions of every game of state ``s`` under the rules ``r`` (a
    :func:`~imperiale_env.core.rules.rule_record`; questions, points and
    cards) as uint64 bitmasks."""
    n = len(s.kind)
    out = np.empty(n, dtype=np.uint64)
    kernel, span = _loop(n, threads, batch_play.action_bits, batch_play.action_bits_threaded)
    kernel(*span, s.kind, s.current_player, s.hands, s.trump, s.trick_cards, s.trick_len, s.win_card, s.tricks_played,
           r, out)
    return out


def illegal_actions(s: BatchState, actions: np.ndarray, bits: np.ndarray) -> tuple[int, int]:
    """(how many, the first) games waiting on a decision whose action is not in ``bits``."""
    return batch_play.illegal_actions(actions, bits, s.kind)


def legal_mask(bits: np.ndarray, width: int) -> np.ndarray:
    """``(N, width)`` bool: the actions of ``bits`` (uint64 masks) as the environments give them."""
    out = np.empty((bits.shape[0], width), dtype=np.bool_)
    batch_play.unpack_actions(bits, out)
    return out
