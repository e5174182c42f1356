"""The batched engine's state: per-deal fields reset by scope, and checkpoints that resume exactly."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from imperiale_cli.devtools.differential import random_legal
from imperiale_env.batch import BatchGame, BatchState
from imperiale_env.batch.stages_kernels import reset_deal
from imperiale_env.batch.state import DEAL, DEAL_FILLS, FIRST_DEAL_FIELD


def _play(game: BatchGame, rng: np.random.Generator, steps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for _ in range(steps):
        out.append(game.step(random_legal(rng, game.legal_action_mask())))
    return out


def test_every_per_deal_field_is_reset_at_a_new_deal():
    state = BatchState.allocate(3, 2, 32)
    deal_fields = [f for f in fields(BatchState) if f.metadata["scope"] == DEAL]
    assert {"hands", "captured", "revealed", "point_suit", "tricks", "trick_cards", "history_len"} <= {
        f.name for f in deal_fields}
    for f in deal_fields:
        getattr(state, f.name)[:] = 1
    reset_deal(state.packed()[FIRST_DEAL_FIELD:], DEAL_FILLS, 1)  # what the compiled deal start runs at every deal
    for f in deal_fields:
        a = getattr(state, f.name)
        assert (a[1] == f.metadata["fill"]).all(), f.name
        assert (a[0] == 1).all() and (a[2] == 1).all(), f.name


def test_the_kernels_tuple_follows_a_field_given_a_new_array():
    """The packed tuple is kept between calls; a field set to another array must not leave the
    kernels writing into the old one."""
    game = BatchGame("academie", 2)
    game.reset(3)
    before = game.state.packed()
    assert game.state.packed() is before
    old = game.history_len
    game.history_len = old.copy()
    after = game.state.packed()
    assert after is not before and any(a is game.history_len for a in after)
    assert not any(a is game.history_len for a in before)
    game.step(random_legal(np.random.default_rng(0), game.legal_action_mask()))
    assert (game.history_len == old + 1).all()  # the decision went into the new array only


@pytest.mark.parametrize("preset", ["academie", "foster", "imperijal", "academie3"])
def test_a_checkpoint_resumes_bit_for_bit(preset):
    game = BatchGame(preset, 16, auto_next_game=True)
    game.reset(5)
    rng = np.random.default_rng(1)
    _play(game, rng, 150)
    data = game.to_dict()
    for value in data.values():  # plain data only: arrays, numbers, strings
        assert isinstance(value, (np.ndarray, int, str, dict)), type(value)
    assert all(isinstance(v, (np.ndarray, int)) for v in data["state"].values())
    twin = BatchGame.from_dict(data)
    rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
    for (ra, ta), (rb, tb) in zip(_play(game, rng_a, 200), _play(twin, rng_b, 200), strict=True):
        assert np.array_equal(ra, rb) and np.array_equal(ta, tb)
    assert np.array_equal(game.observe(), twin.observe())
    assert np.array_equal(game.imperiales, twin.imperiales) and np.array_equal(game.game_id, twin.game_id)


def test_a_checkpoint_of_another_version_or_shape_is_refused():
    game = BatchGame("academie", 2)
    game.reset(0)
    data = game.to_dict()
    with pytest.raises(ValueError, match="version"):
        BatchGame.from_dict({**data, "version": 99})
    bad = {**data, "state": {**data["state"], "hands": np.zeros((3, 2), np.uint64)}}
    with pytest.raises(ValueError, match="hands"):
        BatchGame.from_dict(bad)


def test_a_state_of_version_2_with_int64_fields_is_refused_saying_why():
    game = BatchGame("academie", 2)
    game.reset(0)
    data = game.to_dict()
    old = {name: value.astype(np.int64) if value.dtype.kind == "i" else value
           for name, value in data["state"].items() if name != "version"}
    with pytest.raises(ValueError, match=r"version 2 is not supported \(expected 3\) \(written by an older engine"):
        BatchGame.from_dict({**data, "state": {**old, "version": 2}})
    with pytest.raises(ValueError, match="field imperiales: expected int16"):
        BatchGame.from_dict({**data, "state": {**old, "version": 3}})


def test_a_game_state_is_a_few_hundred_bytes():
    """The small numbers are int8 / int16: 4,096 games take 2.4 MB, not 11.7 (version 2 took 2,867 bytes a game)."""
    game = BatchGame("academie3", 64)
    per_game = sum(getattr(game.state, f.name).nbytes for f in fields(BatchState)) / 64
    assert per_game < 800, per_game
