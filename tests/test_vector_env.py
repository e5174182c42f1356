"""The self-play vector environment: agreement with the reference engine game by game, the
acting seat and reward infos, same-step autoreset, illegal actions, buffers."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import imperiale_env  # noqa: F401  (registers ImperialeSelfPlay-v1)
from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_SIZE, OFFSETS
from imperiale_env.core.rules import PRESET_NAMES, make_rules
from imperiale_env.core.shuffle import next_game_seed
from imperiale_env.envs.vector_env import ImperialeVectorEnv
from imperiale_env.reference.game import Game


def random_actions(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


def test_spaces_and_metadata():
    v = ImperialeVectorEnv(5, rules="academie3")
    assert v.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert v.single_observation_space.shape == (OBS_SIZE,) and v.single_observation_space.dtype == np.uint8
    assert v.single_action_space.n == 43
    assert v.observation_space.shape == (5, OBS_SIZE)
    assert v.action_space.shape == (5,) and np.all(v.action_space.nvec == 43)
    obs, info = v.reset(seed=0)
    assert obs in v.observation_space
    assert info["acting_seat"].shape == (5,) and info["action_mask"].shape == (5, 43)
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].any(axis=1).all()
    made = gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=3, rules="foster")
    assert made.num_envs == 3 and made.unwrapped.rules.preset == "foster"


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_same_games_as_the_reference_engine(preset):
    rules = make_rules(preset)
    P = rules.players
    n = 6
    v = ImperialeVectorEnv(n, rules=preset)
    obs, info = v.reset(seed=4)
    seeds = v.game_seeds
    moves: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    checked = np.zeros(n, dtype=int)
    rng = np.random.default_rng(4)
    for _ in range(5000):
        assert np.array_equal(info["acting_seat"], v.engine.current_player)
        actions = random_actions(rng, info["action_mask"].astype(bool))
        for i in range(n):
            moves[i].append((int(info["acting_seat"][i]), int(actions[i])))
        obs, reward, terminated, truncated, info = v.step(actions)
        assert not truncated.any() and reward.dtype == np.float32
        assert np.array_equal(reward, info["rewards_all"][np.arange(n), info["last_seat"]])
        assert np.array_equal(info["last_seat"], [m[-1][0] for m in moves])
        assert not info["rewards_all"][~terminated].any()
        for i in np.flatnonzero(terminated):
            fi = info["final_info"]
            assert int(fi["game_seed"][i]) == int(seeds[i])
            ref = Game(rules, seed=int(seeds[i]))
            for player, action in moves[i]:
                assert ref.current_player == player
                ref.step(action)
            assert ref.is_over and int(fi["winner"][i]) == ref.winner
            assert fi["imperiales"][i].tolist() == ref.imperiales and fi["points"][i].tolist() == ref.points
            expected = np.full(P, -1.0 / (P - 1), dtype=np.float32)
            expected[ref.winner] = 1.0
            assert np.array_equal(info["rewards_all"][i], expected)
            assert info["final_obs"][i].shape == (OBS_SIZE,) and info["final_obs"][i] in v.single_observation_space
            # The final observation is the last mover's view of the finished game.
            alone = BatchGame(rules, 1)
            alone.reset(seeds[i:i + 1])
            for _, action in moves[i]:
                alone.step(np.array([action]))
            assert alone.done[0]
            last = alone.observe(players=np.array([moves[i][-1][0]]))[0]
            assert np.array_equal(info["final_obs"][i], last)
            # The next game starts at once, with the next seed.
            assert int(v.game_seeds[i]) == int(next_game_seed(seeds[i:i + 1])[0])
            assert obs[i][OFFSETS["hand"]].sum() == 12 and obs[i][OFFSETS["tricks_played"]][0] == 0
            seeds[i] = v.game_seeds[i]
            moves[i] = []
            checked[i] += 1
        if terminated.any():
            assert all(info["final_obs"][i] is None for i in np.flatnonzero(~terminated))
        if (checked >= 1).all():
            break
    assert (checked >= 1).all()


def test_final_info_masks():
    v = ImperialeVectorEnv(16)
    _, info = v.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(3000):
        _, _, terminated, _, info = v.step(random_actions(rng, info["action_mask"].astype(bool)))
        if terminated.any():
            break
    assert np.array_equal(info["_final_obs"], terminated) and np.array_equal(info["_final_info"], terminated)
    for key in ("winner", "imperiales", "points", "game_seed", "rewards", "last_seat"):
        assert np.array_equal(info["final_info"]["_" + key], terminated)
    final = info["final_obs"][np.flatnonzero(terminated)[0]]
    assert final[OFFSETS["phase"]][0] == 0  # nobody is to act in a finished game


def test_one_deal_episodes():
    v = ImperialeVectorEnv(8, episode="deal")
    _, info = v.reset(seed=2)
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(400):
        _, _, terminated, _, info = v.step(random_actions(rng, info["action_mask"].astype(bool)))
        ended += int(terminated.sum())
        assert np.allclose(info["rewards_all"].sum(axis=1), 0.0, atol=1e-6)
        assert (v.engine.deal_index == 0).all()
    assert ended >= 8


def test_illegal_actions_and_bad_shapes_raise_and_change_nothing():
    v = ImperialeVectorEnv(4)
    obs, info = v.reset(seed=0)
    bad = np.argmin(info["action_mask"], axis=1)
    with pytest.raises(ValueError, match="illegal action"):
        v.step(bad)
    with pytest.raises(ValueError, match="expected 4 actions"):
        v.step(np.zeros(3, dtype=int))
    assert np.array_equal(v.engine.legal_action_mask().astype(np.int8), info["action_mask"])
    v.step(np.argmax(info["action_mask"], axis=1))
    with pytest.raises(RuntimeError):
        ImperialeVectorEnv(2).step(np.zeros(2, dtype=int))


def test_copies_and_buffers():
    v = ImperialeVectorEnv(3)
    a, info = v.reset(seed=5)
    b, *_, info = v.step(np.argmax(info["action_mask"], axis=1))
    assert not np.shares_memory(a, b)
    fast = ImperialeVectorEnv(3, copy=False)
    a, info = fast.reset(seed=5)
    b, *_ = fast.step(np.argmax(info["action_mask"], axis=1))
    assert a is b


def test_seeding_is_reproducible():
    x, y = ImperialeVectorEnv(4), ImperialeVectorEnv(4)
    x.reset(seed=7)
    y.reset(seed=7)
    assert np.array_equal(x.game_seeds, y.game_seeds)
    first = x.game_seeds
    x.reset()
    assert not np.array_equal(x.game_seeds, first)


def test_single_deals_from_a_start_score():
    v = ImperialeVectorEnv(8, episode="deal", start={"imperiales": [3, 1], "points": [20, 4], "dealer": 1})
    _, info = v.reset(seed=2)
    rng = np.random.default_rng(2)
    engine = v.engine
    assert engine.start_imperiales.tolist() == [[3, 1]] * 8 and engine.start_dealer.tolist() == [1] * 8
    ended = 0
    while ended < 16:
        _, _, terminated, _, info = v.step(random_actions(rng, info["action_mask"]))
        ended += int(terminated.sum())
        # restarted deals begin from the same score and dealer
        assert engine.start_points.tolist() == [[20, 4]] * 8 and engine.start_dealer.tolist() == [1] * 8
    with pytest.raises(ValueError, match="episode='deal'"):
        ImperialeVectorEnv(2, start={"points": [1, 2]})
