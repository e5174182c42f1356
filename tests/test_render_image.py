"""``render_mode="rgb_array"`` in the Gymnasium and PettingZoo environments."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import render_test

import imperiale_env  # noqa: F401  (registers Imperiale-v1)
from imperiale_env.envs.aec import env as aec_env
from imperiale_env.envs.gym_env import ImperialeEnv
from imperiale_env.envs.render_image import HEIGHT, WIDTH


def _check(frame: np.ndarray) -> None:
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == (HEIGHT, WIDTH, 3)
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 2  # something is written on the baize


def test_gym_frames_change_with_the_state():
    env = ImperialeEnv(render_mode="rgb_array", seat=0)
    env.reset(seed=3)
    first = env.render()
    _check(first)
    mask = env.action_masks()
    env.step(int(np.flatnonzero(mask)[0]))
    second = env.render()
    _check(second)
    assert not np.array_equal(first, second)
    env2 = ImperialeEnv(render_mode="rgb_array", seat=0)
    env2.reset(seed=3)
    assert np.array_equal(env2.render(), first)  # same state, same image


def test_gym_check_env_passes_with_rgb_array(recwarn):
    check_env(gymnasium.make("Imperiale-v1", render_mode="rgb_array").unwrapped, skip_render_check=False)
    assert not [w for w in recwarn if "render" in str(w.message)]  # the render modes were checked


def test_aec_frames_and_render_test():
    e = aec_env(render_mode="rgb_array")
    e.reset(seed=1)
    frames = []
    for _ in range(4):
        frames.append(e.render())
        agent = e.agent_selection
        mask = e.observe(agent)["action_mask"]
        e.step(int(np.flatnonzero(mask)[0]))
    for f in frames:
        _check(f)
    assert any(not np.array_equal(frames[0], f) for f in frames[1:])
    render_test(lambda render_mode=None: aec_env(render_mode=render_mode))
