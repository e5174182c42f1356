"""Arrays passed to compiled code by address (imperiale_env/batch/addresses.py): the arrays rebuilt
inside are the very arrays given, a header of another layout is refused before anything is read,
and the batch state drops its header when a field gets a new array."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from imperiale_env.batch import BatchGame
from imperiale_env.batch.addresses import arrays_at, compiled_fingerprint, header, layout_of
from imperiale_env.batch.observe_kernels import SEEN_FIELDS, encode_at
from imperiale_env.batch.stages_kernels import STALE, step_at
from imperiale_env.kernels.random_policy import random_legal_actions

_SAMPLE = (np.arange(6, dtype=np.int8).reshape(2, 3), np.array([7, 1 << 40], dtype=np.uint64),
           np.array([[True, False], [False, True]]), np.zeros((2, 3, 4), dtype=np.int16))
_at = arrays_at(layout_of(_SAMPLE))
_fingerprint = compiled_fingerprint(layout_of(_SAMPLE))


@njit
def _touch(head):
    """Read and write through the rebuilt arrays; their shapes and the compiled fingerprint."""
    a, b, c, d = _at(head)
    a[1, 2] += 10
    b[0] += np.uint64(1)
    d[1, 2, 3] = a[1, 1] + 100
    return a.shape[0], a.shape[1], d.shape[2], int(c[1, 1]), int(b[1] >> np.uint64(40)), _fingerprint()


def test_the_arrays_rebuilt_from_a_header_are_the_arrays_given():
    arrays = tuple(x.copy() for x in _SAMPLE)
    head = header(arrays)
    assert _touch(head) == (2, 3, 4, 1, 1, head[0])
    assert arrays[0][1, 2] == 15 and arrays[1][0] == 8 and arrays[3][1, 2, 3] == 104
    assert np.count_nonzero(arrays[3]) == 1


def test_a_header_of_another_layout_has_another_fingerprint():
    other = header((_SAMPLE[0].astype(np.int16), *_SAMPLE[1:]))
    assert other[0] != header(_SAMPLE)[0]
    assert header(_SAMPLE[:3])[0] != header(_SAMPLE)[0]


def test_a_non_contiguous_array_is_refused():
    with pytest.raises(ValueError, match="array 1 .* must be C-contiguous"):
        header((_SAMPLE[0], np.arange(8, dtype=np.uint64)[::2]))


def test_the_entry_points_refuse_a_stale_header_without_touching_the_state():
    game = BatchGame("academie", 1)
    game.reset(3)
    before = game.state.to_dict()
    machine = game._machine  # noqa: SLF001 - the compiled entry points as the stage machine calls them
    head = game.state.header().copy()
    head[0] += 1
    tables = game.tables.by_address
    table_head = tables[-1].copy()
    table_head[0] += 1
    actions = random_legal_actions(game.action_bits(), 0, 0)
    for state_head, table_args in ((head, tables), (game.state.header(), (*tables[:-1], table_head))):
        out = step_at(state_head, actions, game.action_bits(), table_args, game.deal_orders, machine.events,
                      machine.counts, machine.flags, machine._keys, np.empty(1, np.uint64))  # noqa: SLF001
        assert out[0] == STALE
    seen = game.state.header(SEEN_FIELDS).copy()
    seen[0] += 1
    buffer = np.full((1, game.observe().shape[1]), 7, dtype=np.uint8)
    assert not encode_at(seen, 0, 1, buffer, np.zeros(1, np.int64), np.zeros(0, np.int64), game.tables.seen_packed)
    assert (buffer == 7).all()
    after = game.state.to_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before if k != "version")


def test_a_stale_header_is_a_clear_error(monkeypatch):
    game = BatchGame("academie", 1)
    game.reset(3)
    head = game.state.header().copy()
    head[0] += 1
    monkeypatch.setattr(game.state, "header", lambda names=None: head)
    with pytest.raises(RuntimeError, match="numba's disk cache holds code compiled for another"):
        game.step(random_legal_actions(game.action_bits(), 0, 0))


def test_a_field_given_a_new_array_is_read_from_it():
    game, twin = BatchGame("foster", 2, auto_next_game=True), BatchGame("foster", 2, auto_next_game=True)
    game.reset(9)
    twin.reset(9)
    for step in range(30):
        if step == 10:
            old = game.state.header()
            game.hands = game.hands.copy()
            game.state.played_in = np.ascontiguousarray(game.state.played_in.copy())
            assert not np.array_equal(game.state.header(), old)  # the new arrays' addresses
        a = random_legal_actions(twin.action_bits(), 2, step)
        assert np.array_equal(game.observe(), twin.observe())
        assert np.array_equal(game.step(a)[0], twin.step(a)[0])
    assert np.array_equal(game.hands, twin.hands) and np.array_equal(game.played_in, twin.played_in)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_batch_steps_its_own_arrays(how):
    import copy
    import pickle

    game, twin = BatchGame("academie", 1, auto_next_game=True), BatchGame("academie", 1, auto_next_game=True)
    game.reset(4)
    twin.reset(4)
    for step in range(5):  # the original's header is built and kept
        a = random_legal_actions(game.action_bits(), 1, step)
        game.step(a)
        twin.step(a)
    clone = copy.deepcopy(game) if how == "deepcopy" else pickle.loads(pickle.dumps(game))
    before = game.state.to_dict()
    for step in range(5, 40):
        a = random_legal_actions(clone.action_bits(), 1, step)
        assert np.array_equal(clone.observe(), twin.observe())
        clone.step(a)
        twin.step(a)
    after = game.state.to_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before if k != "version")  # the original untouched
    assert np.array_equal(clone.hands, twin.hands) and not np.array_equal(clone.history_len, game.history_len)
    # The tables' header too points into the copy's own arrays (the original's may be freed).
    assert clone.tables.by_address[-1][1] == clone.tables.packed[5].ctypes.data != game.tables.by_address[-1][1]
