"""The environments copied, pickled, handed numpy seeds and misused from two threads, as
researchers' tools do (RLCard's step_back, search over copies, worker pools)."""

from __future__ import annotations

import copy
import pickle
import threading
import time

import gymnasium
import numpy as np
import pytest

import imperiale_env
from imperiale_env.batch import BatchGame

COPIES = {"deepcopy": copy.deepcopy, "pickle": lambda env: pickle.loads(pickle.dumps(env))}


def _play_aec(env, rng, steps):
    for _ in range(steps):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if not env.agents:
            break


@pytest.mark.parametrize("how", COPIES)
def test_an_aec_env_copied_mid_game_plays_on_exactly(how):
    env = imperiale_env.env(rules="foster")
    env.reset(seed=4)
    _play_aec(env, np.random.default_rng(0), 30)
    twin = COPIES[how](env)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(60):
        a, b = env.last(), twin.last()
        assert env.agent_selection == twin.agent_selection
        assert np.array_equal(a[0]["observation"], b[0]["observation"]) and a[1:4] == b[1:4]
        _play_aec(env, rng_a, 1)
        _play_aec(twin, rng_b, 1)
        if not env.agents:
            break
    assert env.agents == twin.agents


@pytest.mark.parametrize("how", COPIES)
def test_a_gymnasium_env_copied_mid_game_plays_on_exactly(how):
    env = gymnasium.make("Imperiale-v1", rules="academie")
    _, info = env.reset(seed=2)
    for _ in range(5):
        _, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    twin = COPIES[how](env)
    info_twin = dict(info)
    for _ in range(3000):
        action = int(np.flatnonzero(info["action_mask"])[-1])
        obs, reward, done, trunc, info = env.step(action)
        obs_t, reward_t, done_t, trunc_t, info_twin = twin.step(action)
        assert np.array_equal(obs, obs_t) and (reward, done, trunc) == (reward_t, done_t, trunc_t)
        if done:
            break
    assert done


def test_arrays_handed_out_cannot_change_the_game():
    env = imperiale_env.env()
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    legal = np.flatnonzero(obs["action_mask"])
    obs["action_mask"][:] = 0  # the caller's copy
    env.step(int(legal[0]))  # still legal for the env
    game = BatchGame("academie", 4)
    game.reset(seed=0)
    bits = game.action_bits()
    with pytest.raises(ValueError, match="read-only"):
        bits[:] = np.uint64(2**43 - 1)


@pytest.mark.parametrize("seed", [np.int64(7), np.uint32(7), 7])
def test_numpy_integer_seeds_are_seeds(seed):
    aec = imperiale_env.env()
    aec.reset(seed=seed)
    gym_obs, _ = gymnasium.make("Imperiale-v1").reset(seed=seed)
    vec_obs, _ = gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=2).reset(seed=seed)
    plain = gymnasium.make("Imperiale-v1").reset(seed=7)[0]
    assert np.array_equal(gym_obs, plain) and vec_obs.shape[0] == 2 and aec.game_seed is not None
    for bad in (np.float64(7.0), np.bool_(True), np.int64(-1)):
        with pytest.raises(ValueError, match="seed"):
            gymnasium.make("Imperiale-v1").reset(seed=bad)


class _SlowOpponent:
    """Thinks for a while: the env is busy inside reset/step meanwhile."""

    name = "slow"

    def act(self, obs, mask, rng=None):
        time.sleep(0.5)
        return np.argmax(mask, axis=1)


def test_one_env_stepped_from_two_threads_is_refused():
    env = gymnasium.make("Imperiale-v1", opponent=_SlowOpponent(), seat=1).unwrapped
    errors = []
    busy = threading.Thread(target=lambda: env.reset(seed=3))
    busy.start()
    time.sleep(0.1)
    try:
        env.reset(seed=4)
    except RuntimeError as exc:
        errors.append(str(exc))
    busy.join()
    assert errors and "another thread is using this" in errors[0]
    env.reset(seed=5)  # one thread at a time is fine


def test_one_batch_game_stepped_from_two_threads_is_refused(monkeypatch):
    game = BatchGame("academie", 4)
    game.reset(seed=1)
    inside, leave = threading.Event(), threading.Event()
    machine_step = type(game._machine).step

    def slow_step(self, *args):  # the first thread's step, held inside the engine
        inside.set()
        leave.wait(10)
        return machine_step(self, *args)

    monkeypatch.setattr(type(game._machine), "step", slow_step)
    first = threading.Thread(target=lambda: game.step(np.argmax(game.legal_action_mask(), axis=1)))
    first.start()
    assert inside.wait(10)
    with pytest.raises(RuntimeError, match="BatchGame.step\\(\\): another thread is using this BatchGame"):
        game.step(np.argmax(game.legal_action_mask(), axis=1))
    with pytest.raises(RuntimeError, match="BatchGame.reset\\(\\): another thread"):
        game.reset(seed=2)
    leave.set()
    first.join()
    monkeypatch.undo()
    game.step(np.argmax(game.legal_action_mask(), axis=1))  # one thread at a time is fine
