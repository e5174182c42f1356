"""The RLlib recipe (docs/rllib.md): the observation wrapper alone, and one masked multi-agent PPO
iteration on the float features (the ``[rllib]`` extra, part of ``[dev]``, brings RLlib)."""

from __future__ import annotations

import numpy as np

from imperiale_env.envs.aec import env as make_env
from imperiale_env.envs.rllib import RLlibObservations


def test_wrapper_renames_the_observation_and_changes_nothing_else():
    plain, wrapped = make_env(episode="deal"), RLlibObservations(make_env(episode="deal"))
    assert RLlibObservations(make_env(obs_type="features")).observation_space("player_1")["observations"].dtype \
        == np.float32
    plain.reset(seed=11)
    wrapped.reset(seed=11)
    space = wrapped.observation_space("player_0")
    assert set(space.spaces) == {"observations", "action_mask"}
    assert space["observations"] == plain.observation_space("player_0")["observation"]
    assert space["action_mask"].dtype == np.float32 and space["action_mask"].shape == (43,)
    rng = np.random.default_rng(0)
    steps = 0
    while plain.agents:
        assert wrapped.agent_selection == plain.agent_selection
        agent = plain.agent_selection
        obs, reward, terminated, truncated, _ = plain.last()
        wobs, wreward, wterminated, wtruncated, _ = wrapped.last()
        assert wobs.keys() == {"observations", "action_mask"} and space.contains(wobs)
        assert np.array_equal(wobs["observations"], obs["observation"])
        assert np.array_equal(wobs["action_mask"], obs["action_mask"].astype(np.float32))
        assert (reward, terminated, truncated) == (wreward, wterminated, wtruncated)
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        plain.step(action)
        wrapped.step(action)
        steps += 1
        assert agent in plain.possible_agents
    assert not wrapped.agents and steps > 10
    assert plain.rewards == wrapped.rewards


class Checked(RLlibObservations):
    """Counts the actions taken and those outside the mask (RLlib's env runner is in this process)."""

    checked = 0
    illegal: list[int] = []

    def step(self, action):
        if action is not None:
            Checked.checked += 1
            if not self.observe(self.agent_selection)["action_mask"][action]:
                Checked.illegal.append(int(action))
        super().step(action)


def test_one_masked_multi_agent_ppo_iteration():
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    from imperiale_env.envs.rllib import register, rllib_env

    assert register() == "imperiale"  # the documented creator registers; the test uses the checked copy
    space = rllib_env({"episode": "deal"}).observation_space["player_0"]["observations"]
    assert space.dtype == np.float32  # the creator's default: features, which RLlib's encoders read
    register_env("imperiale-checked", lambda cfg: PettingZooEnv(Checked(make_env(obs_type="features", **cfg))))
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        config = (
            PPOConfig()
            .environment("imperiale-checked", env_config={"episode": "deal"}, disable_env_checking=True)
            .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec(
                module_class=ActionMaskingTorchRLModule,
                model_config={"fcnet_hiddens": [32], "head_fcnet_hiddens": [32]})}))
            .env_runners(num_env_runners=0)
            .training(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=1)
        )
        algo = config.build_algo()
        try:
            result = algo.train()
        finally:
            algo.stop()
    finally:
        if started:
            ray.shutdown()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 128
    assert result["env_runners"]["num_episodes_lifetime"] >= 1
    assert Checked.checked >= 128 and Checked.illegal == []
