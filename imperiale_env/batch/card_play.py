"""The legal actions of the batched engine, through the compiled loops of
:mod:`imperiale_env.batch.card_play_kernels` on the batch state's own arrays (the cards themselves are
played by the compiled step, :mod:`.stages`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from imperiale_env.batch import card_play_kernels as batch_play

if TYPE_CHECKING:
    from imperiale_env.batch.engine import BatchGame


def _loop(g: BatchGame, plain: Any, threaded: Any) -> tuple[Any, tuple[int, ...]]:
    """The kernel to call and its leading arguments: the whole batch on one thread, or a slice a thread."""
    return (plain, (0, g.n)) if g.threads == 1 else (threaded, (g.threads,))


def rule_flags(g: BatchGame) -> np.ndarray:
    """The legality flags of the rules, in the order
    :func:`~imperiale_env.batch.card_play_kernels.action_bits` reads."""
    r = g.rules
    return np.array([r.must_beat, r.must_trump, r.overtrump, r.first_lead_trump], dtype=np.bool_)


def action_bits(g: BatchGame) -> np.ndarray:
    """The legal actions of every game (questions, points and cards) as uint64 bitmasks."""
    s = g.state
    out = np.empty(g.n, dtype=np.uint64)
    kernel, span = _loop(g, batch_play.action_bits, batch_play.action_bits_threaded)
    kernel(*span, s.kind, s.current_player, s.hands, s.trump, s.trick_cards, s.trick_len, s.win_card, s.tricks_played,
           g.rule_flags, out)
    return out


def illegal_actions(g: BatchGame, actions: np.ndarray, bits: np.ndarray) -> tuple[int, int]:
    """(how many, the first) games waiting on a decision whose action is not in ``bits``."""
    return batch_play.illegal_actions(actions, bits, g.state.kind)
