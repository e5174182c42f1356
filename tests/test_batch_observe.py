"""The paths of the batched observation encoder: a dirty buffer, subsets of rows and seats, a
strided buffer, two threads.  (The values themselves are checked against the reference encoder,
every seat at every decision, by the differential tests.)"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_SIZE, OFFSETS, bounds, read
from imperiale_env.core.rules import PRESET_NAMES
from imperiale_env.kernels.random_policy import random_legal_actions

THREADS = min(2, numba.config.NUMBA_NUM_THREADS)
GAMES = 37  # odd: the two threads get slices of different lengths


def _midgame(preset: str, threads: int = 1, steps: int = 23) -> BatchGame:
    """Games part-way through, at every kind of decision (auto_next_game keeps them all running)."""
    game = BatchGame(preset, GAMES, auto_next_game=True, threads=threads)
    game.reset(11)
    for step in range(steps):
        game.step(random_legal_actions(game.action_bits(), 11, step))
    return game


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal byte for byte."""
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


DIRTY = 0xAB  # no entry of the layout can hold it (every range ends below 82)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_entry_of_a_dirty_buffer_is_written(preset):
    """The encoder writes each entry once instead of clearing the row first: no entry may keep
    what the buffer held before (two players leave the third seat's blocks to be written as zeros)."""
    game = _midgame(preset)
    dirty = game.observe(out=np.full((GAMES, OBS_SIZE), DIRTY, dtype=np.uint8))
    ones = game.observe(out=np.full((GAMES, OBS_SIZE), 1, dtype=np.uint8))
    assert (dirty != DIRTY).all() and _same(dirty, ones)
    low, high = bounds(game.rules)
    assert ((dirty >= low) & (dirty <= high)).all()
    if game.players == 2:
        third_seat = np.concatenate([read(dirty, block)[:, -1].reshape(GAMES, -1)
                                     for block in ("not_held", "voids", "shown_items", "point", "tricks")], axis=1)
        assert not third_seat.any() and (read(dirty, "played_by") < 3).all()


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_rows_and_players_encode_the_same_rows_as_the_whole_batch(preset):
    game = _midgame(preset)
    rows = np.array([5, 0, 36, 5, 17])  # any order, repeats allowed
    assert _same(game.observe(rows=rows), game.observe()[rows])
    for shift in range(game.players):
        seats = (game.current_player + shift) % game.players
        whole = game.observe(players=seats)
        assert _same(game.observe(rows=rows, players=seats[rows]), whole[rows])
        if shift:  # a seat that is not to act sees no pending decision
            assert not whole[:, OFFSETS["phase"]].any() and not whole[:, OFFSETS["question_cards"]].any()
        else:
            assert _same(whole, game.observe())
    assert game.observe(rows=np.zeros(0, dtype=np.int64)).shape == (0, OBS_SIZE)


def test_a_strided_buffer_is_filled_like_a_contiguous_one():
    game = _midgame("academie3")
    wide = np.full((GAMES, OBS_SIZE + 2), DIRTY, dtype=np.uint8)
    every_other = np.full((2 * GAMES, OBS_SIZE), DIRTY, dtype=np.uint8)
    assert _same(game.observe(out=wide[:, 1:-1]), game.observe())
    assert (wide[:, 0] == DIRTY).all() and (wide[:, -1] == DIRTY).all()  # nothing written outside the view
    assert _same(game.observe(out=every_other[::2]), game.observe())
    assert (every_other[1::2] == DIRTY).all()


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_two_threads_encode_every_path_like_one(preset):
    assert THREADS == 2, "the machine gives numba a single thread: nothing to compare"
    one, two = _midgame(preset), _midgame(preset, threads=THREADS)
    rows = np.arange(GAMES)[::-3]
    seats = (one.current_player[rows] + 1) % one.players
    dirty = np.full((GAMES, OBS_SIZE), DIRTY, dtype=np.uint8)
    assert _same(two.observe(out=dirty), one.observe())
    assert _same(two.observe(rows=rows, players=seats), one.observe(rows=rows, players=seats))
