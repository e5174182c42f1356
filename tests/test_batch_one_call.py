"""The one-thread step in one compiled call: the legal actions it leaves for the next decision are
those the engine computes afresh, an illegal action moves nothing, and the legal mask is the bits."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_env.batch import BatchGame
from imperiale_env.core import actions as act
from imperiale_env.core.card_masks import unpack
from imperiale_env.kernels.random_policy import random_legal_actions


@pytest.mark.parametrize(("preset", "games", "auto"), [("academie", 1, True), ("foster", 5, False),
                                                        ("academie3", 3, True)])
def test_bits_left_by_the_step_are_the_fresh_ones(preset: str, games: int, auto: bool) -> None:
    game = BatchGame(preset, games, auto_next_game=auto)
    fresh = BatchGame(preset, games, auto_next_game=auto)
    game.reset(11)
    fresh.reset(11)
    for step in range(400):
        bits = game.action_bits()
        fresh._bits = None  # noqa: SLF001 - recomputed from the state, not carried over by the step
        assert np.array_equal(bits, fresh.action_bits())
        assert np.array_equal(game.legal_action_mask(), unpack(bits, act.NUM_ACTIONS))
        a = random_legal_actions(bits, 3, step)
        r1, t1 = game.step(a)
        r2, t2 = fresh.step(a)
        assert np.array_equal(r1, r2) and np.array_equal(t1, t2)
        # The step leaves the next bits unless a game restarted in its slot.
        assert (game._bits is not None) == (not (auto and t1.any()))  # noqa: SLF001
    assert not bits.flags.writeable


def test_an_illegal_action_moves_nothing() -> None:
    game = BatchGame("academie", 2)
    game.reset(5)
    before = game.state.to_dict()
    bits = game.action_bits()
    bad = np.array([int(np.flatnonzero(~game.legal_action_mask()[0])[0]), 0], dtype=np.int64)
    with pytest.raises(ValueError, match=r"illegal action in \d game\(s\): game 0"):
        game.step(bad)
    after = game.state.to_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before if k != "version")
    assert game.action_bits() is bits
