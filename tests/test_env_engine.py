"""The single-game environments on the batched engine against the reference engine.

The AEC and Gymnasium envs step a ``BatchGame(1)`` (:mod:`imperiale_env.envs.single_game`); here
random seeded games through them are replayed in a reference :class:`Game` built independently
from the same seed, and every seat's observation (:func:`imperiale_env.reference.observe.observe`),
every mask, reward and termination must be the same at every decision, in every preset, in
the rule variants that switch several rules at once, in one-deal episodes from a score, and in a
game that ends before its first decision."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from imperiale_cli.devtools.rule_variants import COMBINATIONS, SMALL_TARGET
from imperiale_env.core.actions import NUM_ACTIONS
from imperiale_env.core.rules import PRESET_NAMES, Rules, RulesError, make_rules
from imperiale_env.envs.aec import raw_env
from imperiale_env.envs.env_checks import end_rewards
from imperiale_env.envs.gym_env import ImperialeEnv
from imperiale_env.reference.game import Game
from imperiale_env.reference.observe import observe


def _variants() -> list[tuple[str, Rules]]:
    """Each preset, and each of the rule variants' combinations that the preset allows."""
    out = [(preset, make_rules(preset)) for preset in PRESET_NAMES]
    for preset in PRESET_NAMES:
        for k, change in enumerate(COMBINATIONS):
            try:
                out.append((f"{preset}+combination{k}", make_rules(preset, target_imperiales=SMALL_TARGET, **change)))
            except RulesError:
                continue
    return out


VARIANTS = _variants()


def test_the_variants_cover_every_preset_and_several_combinations():
    assert len(VARIANTS) >= len(PRESET_NAMES) + 12
    assert {rules.preset for _, rules in VARIANTS} == set(PRESET_NAMES)


def _reference(rules: Rules, seed: int, start: dict | None) -> Game:
    if start is None:
        return Game(rules, seed=seed)
    return Game(rules, seed=seed, single_deal=True, **start)


def play_aec_against_the_reference(rules: Rules, seed: int, start: dict | None = None) -> int:
    """One random game through the raw AEC env, checked at every decision; returns its length."""
    e = raw_env(rules=rules, episode="game" if start is None else "deal", start=start)
    e.reset(seed=seed)
    ref = _reference(rules, e.game_seed, start)
    rng = np.random.default_rng(seed)
    decisions = 0
    while True:
        over = ref.decision is None
        assert all(e.terminations[a] is over for a in e.agents) and not any(e.truncations.values())
        for p, agent in enumerate(e.possible_agents):
            seen = e.observe(agent)
            assert np.array_equal(seen["observation"], observe(ref, p)), (decisions, p)
            want = np.zeros(NUM_ACTIONS, np.int8) if over or p != ref.current_player else ref.legal_mask()
            assert np.array_equal(seen["action_mask"], want.astype(np.int8)), (decisions, p)
        if over:
            break
        assert e.agent_selection == f"player_{ref.current_player}"
        assert all(r == 0.0 for r in e.rewards.values())
        action = int(rng.choice(ref.legal_actions()))
        e.step(action)
        ref.step(action)
        decisions += 1
    final = end_rewards(ref)
    assert e.rewards == {agent: float(final[p]) for p, agent in enumerate(e.possible_agents)}
    assert (e.winner, e.imperiales, e.points) == (ref.winner, ref.imperiales, ref.points)
    assert e._game._replay is None  # the plain loop never rebuilt the reference game
    return decisions


@pytest.mark.parametrize("label, rules", VARIANTS, ids=[label for label, _ in VARIANTS])
def test_aec_games_agree_with_the_reference_engine(label, rules):
    seeds = range(2) if label in PRESET_NAMES else range(1)
    assert sum(play_aec_against_the_reference(rules, seed) for seed in seeds) > 20


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_aec_one_deal_episodes_from_a_score_agree(preset):
    rules = make_rules(preset)
    P = rules.players
    start = {"imperiales": [1] * P, "points": [12] + [4] * (P - 1), "dealer": 0}
    lengths = [play_aec_against_the_reference(rules, seed, start) for seed in range(4)]
    assert max(lengths) > 10


def test_aec_game_over_before_the_first_decision_agrees():
    start = {"imperiales": [4, 4], "points": [20, 20], "dealer": 0}
    lengths = [play_aec_against_the_reference(make_rules("academie"), seed, start) for seed in range(40)]
    assert 0 in lengths and max(lengths) > 0  # some deals end on the turned honour, others are played


class _CheckingOpponent:
    """Random legal play for the Gymnasium env's other seats, checking each observation and mask
    it is given against a reference game that follows every action of the episode."""

    def __init__(self, env: ImperialeEnv, rules: Rules, start: dict | None, seed: int):
        self.env, self.rules, self.start = env, rules, start
        self.rng = np.random.default_rng(seed)
        self.ref: Game | None = None
        self.seed: int | None = None

    def follow(self) -> Game:
        """The reference game of the env's current episode (a new one after each deal)."""
        if self.seed != self.env.game_seed:
            self.seed, self.ref = self.env.game_seed, _reference(self.rules, self.env.game_seed, self.start)
        return self.ref

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:
        ref = self.follow()
        assert np.array_equal(obs, observe(ref, ref.current_player)) and np.array_equal(mask, ref.legal_mask())
        action = int(self.rng.choice(ref.legal_actions()))
        ref.step(action)
        return action


@pytest.mark.parametrize("label, rules", VARIANTS[:len(PRESET_NAMES)] + VARIANTS[-3:],
                         ids=[label for label, _ in VARIANTS[:len(PRESET_NAMES)] + VARIANTS[-3:]])
@pytest.mark.parametrize("episode", ["game", "deal"])
def test_gymnasium_games_agree_with_the_reference_engine(label, rules, episode):
    start = None if episode == "game" else {"imperiales": [0] * rules.players, "points": [0] * rules.players,
                                            "dealer": None}
    env = ImperialeEnv(rules=rules, seat="random", episode=episode, start=start)
    opponent = _CheckingOpponent(env, rules, start, 3)
    env._opponent = env._adapt_opponent(opponent)
    for seed in range(2):
        obs, info = env.reset(seed=seed)
        terminated, total = False, 0.0
        while not terminated:
            ref = opponent.follow()
            seat = info["seat"]
            assert ref.current_player == seat
            assert np.array_equal(obs, observe(ref, seat)) and np.array_equal(info["action_mask"], ref.legal_mask())
            action = int(opponent.rng.choice(ref.legal_actions()))
            ref.step(action)
            obs, reward, terminated, truncated, info = env.step(action)
            assert not truncated and (terminated is (ref.decision is None))
            total += reward
        assert np.array_equal(obs, observe(ref, seat)) and not info["action_mask"].any()
        assert total == float(end_rewards(ref)[seat])
        assert (info["winner"], info["imperiales"].tolist(), info["points"].tolist()) == (
            -1 if ref.winner is None else ref.winner, ref.imperiales, ref.points)


@pytest.mark.parametrize("how", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))], ids=["deepcopy", "pickle"])
def test_a_copy_rebuilds_the_same_reference_game(how):
    e = raw_env(rules="academie3", render_mode="ansi")
    e.reset(seed=6)
    rng = np.random.default_rng(6)
    for _ in range(40):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    text = e.render()  # builds the reference game, which a copy leaves out and rebuilds
    twin = how(e)
    assert twin._game._replay is None
    assert twin.render() == text
    assert twin.engine.state.hands == e.engine.state.hands and twin.engine.history == e.engine.history
