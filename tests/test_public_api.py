"""What users import keeps working whatever the layout inside: every name of ``imperiale_env.__all__``,
the batched engine, the environment constructors and the registered ids."""

import importlib

import gymnasium
import pettingzoo
import pytest

import imperiale_env
from imperiale_env.envs.registration import GYM_ID, GYM_VECTOR_ID, PETTINGZOO_ID, RetiredEnvError


def test_every_public_name_imports():
    for name in imperiale_env.__all__:
        assert getattr(imperiale_env, name) is not None, name


def test_the_documented_entry_points():
    from imperiale_env import Game, Rules, make_rules  # noqa: F401
    from imperiale_env.batch import BatchGame

    game = BatchGame(make_rules("academie"), 2)
    game.reset(seed=0)
    assert game.n == 2 and game.legal_action_mask().shape[0] == 2
    aec = imperiale_env.env()
    aec.reset(seed=1)
    assert aec.agent_selection in aec.agents
    assert callable(imperiale_env.raw_env)


def test_the_pettingzoo_classic_form_imports():
    from imperiale_env import imperiale_v1
    from imperiale_env.envs import aec

    assert imperiale_v1.env is aec.env and imperiale_v1.raw_env is aec.raw_env
    env = imperiale_v1.env(rules="foster", obs_type="features")
    env.reset(seed=2)
    assert env.observe(env.agent_selection)["observation"].dtype.name == "float32"


def test_the_registered_ids_build_envs():
    env = gymnasium.make(GYM_ID)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    vec = gymnasium.make_vec(GYM_VECTOR_ID, num_envs=2)
    assert vec.num_envs == 2
    aec = pettingzoo.make("aec", PETTINGZOO_ID)
    aec.reset(seed=0)
    assert aec.agents


def test_the_ids_of_observation_version_0_refuse_in_one_line_naming_the_new_ones():
    for make, old, new in ((lambda i: gymnasium.make(i), "Imperiale-v0", GYM_ID),
                           (lambda i: gymnasium.make_vec(i, num_envs=2), "ImperialeSelfPlay-v0", GYM_VECTOR_ID),
                           (lambda i: pettingzoo.make("aec", i), "imperiale/imperiale_v0", PETTINGZOO_ID)):
        with pytest.raises(RetiredEnvError) as caught:
            make(old)
        message = str(caught.value)
        assert "\n" not in message and old in message and f"use {new}" in message and "version 1" in message
    assert (GYM_ID, GYM_VECTOR_ID, PETTINGZOO_ID) == ("Imperiale-v1", "ImperialeSelfPlay-v1", "imperiale/imperiale_v1")


def test_no_generic_top_level_package_is_installed():
    """``agents`` and ``train`` are folders of the repository, installed as ``imperiale_agents`` and
    ``imperiale_train``: code must import those names, so a user's ``train.py`` cannot shadow them."""
    for name in ("imperiale_agents.base", "imperiale_train.run"):
        module = importlib.import_module(name)
        assert module.__name__ == name
