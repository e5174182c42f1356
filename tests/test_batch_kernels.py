"""The compiled hot path of the batched engine: thread counts, the random legal policy, the checks
in front of the kernels (the differential tests check the values against the reference engine)."""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from numba import njit

from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_SIZE
from imperiale_env.kernels.mask_ops import card_count, lowest_card
from imperiale_env.kernels.random_policy import random_legal_actions

THREADS = min(2, numba.config.NUMBA_NUM_THREADS)


def _play(rules: str, threads: int, steps: int = 150) -> tuple[dict, np.ndarray, np.ndarray]:
    game = BatchGame(rules, 37, auto_next_game=True, record_events=True, threads=threads)
    game.reset(5)
    observations = np.empty((steps, 37, OBS_SIZE), dtype=np.uint8)
    masks = np.empty((steps, 37), dtype=np.uint64)
    for step in range(steps):
        game.observe(out=observations[step])
        masks[step] = game.action_bits()
        game.step(random_legal_actions(masks[step], 9, step, threads=threads))
    return game.state.to_dict(), observations, np.concatenate([masks.ravel(), game.pop_events().ravel()])


@pytest.mark.parametrize("rules", ["academie", "academie3", "foster", "imperijal"])
def test_results_are_the_same_on_one_and_two_threads(rules):
    assert THREADS == 2, "the machine gives numba a single thread: nothing to compare"
    one, obs_one, rest_one = _play(rules, 1)
    two, obs_two, rest_two = _play(rules, THREADS)
    assert one.keys() == two.keys()
    for name in one:
        assert np.array_equal(one[name], two[name]), name
    assert np.array_equal(obs_one, obs_two)
    assert np.array_equal(rest_one, rest_two)
    assert obs_one.any() and rest_one.any()


def test_the_random_policy_is_legal_uniform_and_counter_based():
    legal = np.uint64((1 << 3) | (1 << 17) | (1 << 40))
    bits = np.full(6000, legal, dtype=np.uint64)
    bits[5] = 0  # no decision
    draws = random_legal_actions(bits, 11, 0)
    assert draws[5] == 0
    picked = np.delete(draws, 5)
    counts = {a: int((picked == a).sum()) for a in (3, 17, 40)}
    assert sum(counts.values()) == len(picked)  # every draw is legal
    assert all(1800 < c < 2200 for c in counts.values()), counts  # about a third each
    assert np.array_equal(random_legal_actions(bits, 11, 0, threads=THREADS), draws)
    assert np.array_equal(random_legal_actions(bits[:100], 11, 0), draws[:100])  # game i's draw is its own
    assert not np.array_equal(random_legal_actions(bits, 11, 1), draws)  # the next step draws anew
    assert not np.array_equal(random_legal_actions(bits, 12, 0), draws)


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, 10**6])
def test_a_thread_count_outside_the_cores_is_refused(threads):
    with pytest.raises(ValueError, match="threads must be a whole number from 1 to"):
        BatchGame("academie", 4, threads=threads)


@pytest.mark.parametrize("kwargs, error", [
    ({"out": np.empty((4, OBS_SIZE), dtype=np.float32)}, "out must be a writeable uint8 array"),
    ({"out": np.empty((3, OBS_SIZE), dtype=np.uint8)}, "out must be a writeable uint8 array"),
    ({"players": np.array([0, 1, 2, 0])}, "players must be from 0 to 1"),
    ({"players": np.array([0, 1])}, "players must be a 1-d array of 4 integers"),
    ({"rows": np.array([4])}, "rows must be from 0 to 3"),
    ({"rows": np.array([0.5])}, "rows must be a 1-d array of integers"),
])
def test_observe_refuses_what_the_kernel_would_read_out_of_bounds(kwargs, error):
    game = BatchGame("academie", 4)
    game.reset(0)
    with pytest.raises(ValueError, match=error):
        game.observe(**kwargs)


def test_a_read_only_buffer_is_refused():
    game = BatchGame("academie", 4)
    game.reset(0)
    out = np.empty((4, OBS_SIZE), dtype=np.uint8)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        game.observe(out=out)


@njit
def _compiled_counts(masks: np.ndarray, counts: np.ndarray, lowest: np.ndarray) -> None:
    for k in range(masks.shape[0]):
        counts[k] = card_count(masks[k])
        lowest[k] = lowest_card(masks[k])


def test_the_compiled_bit_counts_agree_with_the_plain_ones():
    """Compiled callers get the processor's popcnt / tzcnt, Python the shifts and adds: the same numbers."""
    rng = np.random.default_rng(4)
    masks = np.concatenate([rng.integers(1, 2**63, 500, dtype=np.uint64) >> rng.integers(0, 63, 500).astype(np.uint64),
                            np.uint64(1) << np.arange(64, dtype=np.uint64)])
    masks = masks[masks != 0]
    counts, lowest = np.empty(len(masks), np.int64), np.empty(len(masks), np.int64)
    _compiled_counts(masks, counts, lowest)
    for mask, count, low in zip(masks, counts, lowest, strict=True):
        assert count == bin(int(mask)).count("1") == card_count(mask)
        assert low == (int(mask) & -int(mask)).bit_length() - 1 == lowest_card(mask)
    _compiled_counts(np.zeros(1, np.uint64), counts[:1], lowest[:1])
    assert counts[0] == 0 and lowest[0] == 64  # an empty mask, as the plain version says


_PLAY_AND_DIGEST = """
import hashlib, numpy as np
from imperiale_env.batch import BatchGame
from imperiale_env.kernels.random_policy import random_legal_actions
digest = hashlib.sha256()
for preset in ('academie', 'academie3', 'foster', 'imperijal'):
    game = BatchGame(preset, 3, auto_next_game=True, record_events=True)
    game.reset(1)
    for step in range(100):
        digest.update(game.observe().tobytes())
        digest.update(game.step(random_legal_actions(game.action_bits(), 0, step))[0].tobytes())
    for name, value in game.state.to_dict().items():
        digest.update(name.encode() + np.asarray(value).tobytes())
    digest.update(game.pop_events().tobytes())
print(digest.hexdigest())
"""


def test_with_jit_disabled_the_batch_plays_the_same_games():
    """NUMBA_DISABLE_JIT=1 runs the kernels as Python on numpy scalars, where the int8 / int16 fields
    do not widen as in compiled code: the games, observations and events must be the same."""
    runs = []
    for disabled in ("0", "1"):
        env = {**os.environ, "NUMBA_DISABLE_JIT": disabled}
        done = subprocess.run([sys.executable, "-c", _PLAY_AND_DIGEST], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(done.stdout.strip())
    assert runs[0] == runs[1] and len(runs[0]) == 64
