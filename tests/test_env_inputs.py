"""What users hand the environments: actions, seeds, options.  Every bad input is refused with
an error naming it and what is allowed, before anything changes; Gymnasium's vector envs can
gather every info (the game seeds fit an int64)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import imperiale_env  # noqa: F401  (registers the environments)
from imperiale_env.core.input_checks import SEED_LIMIT, InputError
from imperiale_env.core.rules import RulesError
from imperiale_env.core.shuffle import next_game_seed
from imperiale_env.envs.aec import env, raw_env
from imperiale_env.envs.env_checks import draw_game_seeds
from imperiale_env.envs.gym_env import ImperialeEnv
from imperiale_env.envs.vector_env import ImperialeVectorEnv

# (action, error type, words of the message)
NOT_INTEGERS = [
    (None, TypeError, "the action None is not an action id.*; None is only for an agent whose game has ended"),
    (float("nan"), TypeError, "nan"),
    ("38", TypeError, "'38' \\(str\\)"),
    (True, TypeError, "True \\(bool\\)"),
    (38.7, TypeError, "38.7 \\(float\\)"),
    (38.0, TypeError, "38.0 \\(float\\)"),
    (np.float64(38.0), TypeError, "float64"),
    (np.array([38]), TypeError, "ndarray"),
    ([38], TypeError, "list"),
]
OUT_OF_RANGE = [(43, ValueError, "the action 43 is out of range"), (-1, ValueError, "the action -1 is out of range"),
                (np.int64(1000), ValueError, "the action 1000 is out of range"), (2**70, ValueError, "out of range"),
                pytest.param(10**5000, ValueError, "the action of 16610 bits is out of range", id="10**5000")]
BAD_ACTIONS = NOT_INTEGERS + OUT_OF_RANGE
ALLOWED = r"an action id, an integer 0\.\.42 \(legal now: "


def legal_ids(mask: np.ndarray) -> list[int]:
    return np.flatnonzero(mask).tolist()


def snapshot(game) -> tuple:
    return (repr(game.state.hands), list(game.state.actions), len(game.history), game.current_player,
            list(game.points), list(game.imperiales))


def batch_snapshot(game) -> tuple:
    return (game.hands.tobytes(), game.history_len.tobytes(), game.current_player.tobytes(),
            game.points.tobytes(), game.imperiales.tobytes())


# ------------------------------------------------------------------ the AEC environment


@pytest.mark.parametrize("make", [raw_env, env])
@pytest.mark.parametrize("action, error, words", BAD_ACTIONS)
def test_aec_bad_actions_name_the_action_the_range_and_the_legal_actions(make, action, error, words):
    e = make()
    e.reset(seed=1)
    agent = e.agent_selection
    before = snapshot(e.unwrapped.engine)
    with pytest.raises(error, match=words) as info:
        e.step(action)
    message = str(info.value)
    assert message.startswith(f"{agent}: ") and "0..42" in message and "legal now: " in message
    legal = legal_ids(e.unwrapped.engine.legal_mask())
    assert all(str(a) in message for a in legal)
    assert snapshot(e.unwrapped.engine) == before and e.agent_selection == agent
    assert not any(e.terminations.values())
    e.step(legal[0])  # the game goes on


@pytest.mark.parametrize("make", [raw_env, env])
def test_aec_numpy_integers_of_every_kind_are_actions(make):
    for dtype in (np.int8, np.int32, np.int64, np.uint8, np.uint64):
        e = make()
        e.reset(seed=2)
        legal = legal_ids(e.unwrapped.engine.legal_mask())
        e.step(dtype(legal[-1]))
        e2 = make()
        e2.reset(seed=2)
        e2.step(np.array(legal[-1], dtype=dtype))  # a 0-d array, as Discrete.sample() may give
        assert snapshot(e.unwrapped.engine) == snapshot(e2.unwrapped.engine)


def test_aec_an_illegal_id_keeps_the_wrappers_behaviour():
    e = env()
    e.reset(seed=3)
    actor = e.agent_selection
    illegal = int(np.flatnonzero(e.last()[0]["action_mask"] == 0)[-1])
    e.step(np.int64(illegal))
    assert all(e.terminations.values()) and e.rewards[actor] == -1.0
    raw = raw_env()
    raw.reset(seed=3)
    with pytest.raises(ValueError, match="illegal action"):
        raw.step(illegal)


def test_aec_a_finished_agent_steps_with_none_only():
    e = env()
    e.reset(seed=4)
    e.step(int(np.flatnonzero(e.last()[0]["action_mask"] == 0)[0]))  # illegal: the game ends
    agent = e.agent_selection
    with pytest.raises(ValueError, match=f"{agent}: the game is over for this agent: step\\(None\\), not step\\(0\\)"):
        e.step(0)
    e.step(None)


def test_raw_aec_step_before_reset_says_reset():
    with pytest.raises(RuntimeError, match="call reset"):
        raw_env().step(0)


# ------------------------------------------------------------------ the Gymnasium environment


@pytest.mark.parametrize("action, error, words", BAD_ACTIONS)
def test_gym_bad_actions_are_refused_and_change_nothing(action, error, words):
    e = ImperialeEnv()
    e.reset(seed=1)
    before = snapshot(e.engine)
    with pytest.raises(error, match=words) as info:
        e.step(action)
    assert "the agent (seat 0)" in str(info.value) and "0..42" in str(info.value)
    assert snapshot(e.engine) == before
    _, reward, terminated, _, info = e.step(legal_ids(e.action_masks())[0])
    assert not info.get("illegal_action", False)


def test_gym_38_is_not_played_for_38_7_or_the_string_38():
    for bad in (38.7, "38"):
        e = ImperialeEnv()
        e.reset(seed=0)
        played = len(e.engine.state.actions)
        with pytest.raises(TypeError, match="0..42"):
            e.step(bad)
        assert len(e.engine.state.actions) == played


@pytest.mark.parametrize("seat", [2, -1, "north", True, 1.0, None, np.array([0])])
def test_gym_bad_seats(seat):
    with pytest.raises(ValueError, match="seat must be 0..1 or 'random'"):
        ImperialeEnv(seat=seat)


def test_gym_opponent_answers_are_checked_like_the_agents():
    e = ImperialeEnv(opponent=lambda obs, mask: float(np.argmax(mask)) + 0.5, seat=1)
    with pytest.raises(TypeError, match=r"the opponent \(seat 0\): the action .* \(float\) is not an action id"):
        for seed in range(10):
            e.reset(seed=seed)

    class Wide:
        def act(self, obs, mask):
            return np.zeros(3, dtype=int)

    with pytest.raises(ValueError, match="shape \\(1,\\)"):
        for seed in range(10):
            ImperialeEnv(opponent=Wide(), seat=1).reset(seed=seed)


# ------------------------------------------------------------------ seeds


@pytest.mark.parametrize("seed", [-1, SEED_LIMIT, 2**64, 1.0, "3", True])
@pytest.mark.parametrize("make", [raw_env, ImperialeEnv, lambda: ImperialeVectorEnv(2)])
def test_reset_seeds_outside_the_range_are_refused(make, seed):
    e = make()
    with pytest.raises(InputError, match=r"reset seed must be .*\[0, 2\*\*63\)"):
        e.reset(seed=seed)


def test_every_game_seed_a_user_sees_fits_an_int64():
    rng = np.random.default_rng(0)
    seeds = draw_game_seeds(rng, 10000)
    assert seeds.dtype == np.uint64 and int(seeds.max()) < SEED_LIMIT and int(seeds.max()) > SEED_LIMIT // 2
    follow = next_game_seed(np.array([2**64 - 1, 0, 12345], dtype=np.uint64))
    assert (follow < np.uint64(SEED_LIMIT)).all()
    for seed in range(20):
        for e in (raw_env(), ImperialeEnv()):
            e.reset(seed=seed)
            assert 0 <= e.game_seed < SEED_LIMIT and isinstance(e.game_seed, int)
    v = ImperialeVectorEnv(64)
    v.reset(seed=0)
    assert int(v.game_seeds.max()) < SEED_LIMIT


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_of_the_single_agent_env(mode):
    v = gymnasium.make_vec("Imperiale-v1", num_envs=4, vectorization_mode=mode)
    try:
        ended = 0
        for seed in (0, 1, 7):
            _, info = v.reset(seed=seed)
            assert info["game_seed"].dtype == np.int64 and (info["game_seed"] >= 0).all()
            rng = np.random.default_rng(seed)
            for _ in range(200):
                mask = info["action_mask"].astype(bool)
                _, _, terminated, _, info = v.step(np.argmax(rng.random(mask.shape) * mask, axis=1))
                ended += int(terminated.sum())
                assert "game_seed" in info
        assert ended > 0
    finally:
        v.close()


# ------------------------------------------------------------------ options


@pytest.mark.parametrize("make", [raw_env, ImperialeEnv])
@pytest.mark.parametrize("kwargs, error, words", [
    ({"rules": "nope"}, RulesError, "unknown rules preset"),
    ({"rules": 3}, RulesError, "must be a Rules, a preset name or a dict"),
    ({"rules": {"preset": "academie", "target_imperiales": 10**6}}, RulesError, "1..100"),
    ({"episode": "match"}, ValueError, "episode must be 'game' or 'deal'"),
    ({"episode": ["game"]}, ValueError, "episode must be 'game' or 'deal'"),
    ({"render_mode": "rgba"}, ValueError, "render_mode must be None, 'ansi', 'human' or 'rgb_array'"),
    ({"render_mode": ["ansi"]}, ValueError, "render_mode must be None, 'ansi', 'human' or 'rgb_array'"),
    ({"start": {"points": [0, 0]}}, ValueError, "episode='deal'"),
    ({"episode": "deal", "start": "0-0"}, ValueError, "start must be a dict"),
    ({"episode": "deal", "start": {"score": 1}}, ValueError, "unknown start keys"),
    ({"episode": "deal", "start": {"points": [1.5, 0]}}, ValueError, r"start\['points'\] must be a list of 2 integers"),
    ({"episode": "deal", "start": {"points": ["3", 0]}}, ValueError, r"start\['points'\] must be a list of 2"),
    ({"episode": "deal", "start": {"points": "00"}}, ValueError, r"start\['points'\] must be a list of 2"),
    ({"episode": "deal", "start": {"imperiales": [True, 0]}}, ValueError, r"start\['imperiales'\]"),
    ({"episode": "deal", "start": {"imperiales": [5, 0]}}, ValueError, r"integers in 0\.\.4"),
    ({"episode": "deal", "start": {"dealer": 1.0}}, ValueError, r"start\['dealer'\] must be a seat 0\.\.1"),
])
def test_bad_options_name_what_is_allowed(make, kwargs, error, words):
    with pytest.raises(error, match=words):
        make(**kwargs)


def test_numpy_start_scores_are_taken_at_their_value():
    e = raw_env(episode="deal", start={"imperiales": np.array([1, 2]), "points": [np.int64(4), 0],
                                       "dealer": np.int32(1)})
    e.reset(seed=0)
    assert e.engine.start_imperiales == [1, 2] and e.engine.start_dealer == 1


@pytest.mark.parametrize("make", [raw_env, ImperialeEnv])
def test_reset_options(make):
    e = make(episode="deal")
    with pytest.raises(ValueError, match="reset options must be a dict"):
        e.reset(seed=0, options=["start"])
    with pytest.raises(ValueError, match=r"start\['points'\]"):
        e.reset(seed=0, options={"start": {"points": [30, 0]}})
    with pytest.warns(UserWarning, match=r"reset option\(s\) \['strat'\] ignored: the only option"):
        e.reset(seed=0, options={"strat": {"points": [4, 0]}})
    e.reset(seed=0, options={"start": {"points": [4, 0]}})
    assert e.unwrapped.engine.start_points == [4, 0]


@pytest.mark.parametrize("kwargs, words", [
    ({"num_envs": 0}, "num_envs must be a positive integer"),
    ({"num_envs": 2.5}, "num_envs must be a positive integer"),
    ({"num_envs": "4"}, "num_envs must be a positive integer"),
    ({"num_envs": True}, "num_envs must be a positive integer"),
    ({"copy": "no"}, "copy must be True or False"),
    ({"final_obs": 0}, "final_obs must be True or False"),
    ({"episode": "match"}, "episode must be"),
])
def test_vector_env_bad_arguments(kwargs, words):
    with pytest.raises(ValueError, match=words):
        ImperialeVectorEnv(**{"num_envs": 2, **kwargs})


def test_vector_env_bad_actions_and_options():
    v = ImperialeVectorEnv(2)
    _, info = v.reset(seed=0)
    legal = np.argmax(info["action_mask"], axis=1)
    before = batch_snapshot(v.engine)
    for bad in (legal + 0.7, legal.astype(float), legal.astype(str), np.array([True, False]), [None, None]):
        with pytest.raises(TypeError, match=r"actions must be integers \(action ids 0\.\.42\)"):
            v.step(bad)
    with pytest.raises(ValueError, match="chose 43"):
        v.step(np.array([43, 43]))
    assert batch_snapshot(v.engine) == before
    v.step(legal.astype(np.uint8))
    with pytest.raises(ValueError, match="given to the constructor"):
        v.reset(seed=0, options={"start": {"points": [0, 0]}})
