"""The PettingZoo AEC environment: PettingZoo's own tests, agreement with the reference engine,
illegal actions, one-deal episodes from a given score, rendering."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import imperiale_env
from imperiale_env.core.observation import OBS_SIZE, OFFSETS
from imperiale_env.core.rules import PRESET_NAMES, make_rules
from imperiale_env.envs import aec
from imperiale_env.envs.aec import aec_decisions_per_second, env, raw_env
from imperiale_env.reference.game import Game

# api_test warns about dict observations and Dict spaces for every env whose name is not on its
# hard-coded list of PettingZoo's own classic games; these two warnings are expected.  It also
# resets with options={"options": 1}, which the env ignores with a warning naming the option.
EXPECTED_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    "reset option(s) ['options'] ignored: the only option of this environment is 'start'",
)


def random_action(rng: np.random.Generator, obs: dict) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(len(legal))])


def play_out(e, rng: np.random.Generator) -> tuple[list[tuple[int, int]], dict[str, float]]:
    """Random legal actions to the end; the (seat, action) sequence and each agent's final reward."""
    moves, final = [], {}
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        assert e.observation_space(agent).contains(obs)
        if terminated or truncated:
            final[agent] = reward
            e.step(None)
            continue
        action = random_action(rng, obs)
        moves.append((int(agent.split("_")[1]), action))
        e.step(action)
    return moves, final


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_pettingzoo_api_test(preset):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(rules=preset), num_cycles=1000)
    unexpected = {str(w.message) for w in caught} - set(EXPECTED_WARNINGS)
    assert not unexpected


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_pettingzoo_seed_test(preset):
    seed_test(functools.partial(env, rules=preset), num_cycles=500)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_pettingzoo_render_test(preset, capsys):
    render_test(functools.partial(env, rules=preset))
    assert "Trump" in capsys.readouterr().out


# pettingzoo.test.max_cycles_test does not apply: it needs a parallel_env and a max_cycles argument, and a game
# of L'Impériale has neither (it is not parallelizable and ends by the rules).


def test_spaces_metadata_and_registry():
    e = raw_env(rules="academie3")
    assert e.possible_agents == ["player_0", "player_1", "player_2"]
    assert e.metadata["name"] == "imperiale_v1" and e.metadata["is_parallelizable"] is False
    for agent in e.possible_agents:
        space = e.observation_space(agent)
        assert space is e.observation_space(agent) and e.action_space(agent) is e.action_space(agent)
        assert space["observation"].shape == (OBS_SIZE,) and space["observation"].dtype == np.uint8
        assert space["action_mask"].shape == (43,) and space["action_mask"].dtype == np.int8
        assert e.action_space(agent).n == 43
    assert "(OBS_SIZE,)" in aec.__doc__ and "docs/observation.md" in aec.__doc__
    assert imperiale_env.env is env and imperiale_env.raw_env is raw_env
    made = pettingzoo.make("aec", "imperiale/imperiale_v1", rules="foster")
    made.reset(seed=1)
    assert made.unwrapped.rules.preset == "foster"


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_same_game_as_the_reference_engine(preset):
    rules = make_rules(preset)
    rng = np.random.default_rng(11)
    e = env(rules=preset)
    for seed in range(3):
        e.reset(seed=seed)
        moves, final = play_out(e, rng)
        raw = e.unwrapped
        ref = Game(rules, seed=raw.game_seed)
        for player, action in moves:
            assert ref.current_player == player
            ref.step(action)
        assert ref.is_over and ref.current_player is None
        assert ref.winner == raw.winner is not None
        assert ref.imperiales == raw.imperiales and ref.points == raw.points
        P = rules.players
        assert final == {f"player_{p}": (1.0 if p == ref.winner else -1.0 / (P - 1)) for p in range(P)}
        assert all(type(r) is float for r in final.values())


def test_rewards_come_at_the_end_as_python_numbers():
    e = env()
    e.reset(seed=5)
    rng = np.random.default_rng(0)
    for _agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        assert type(terminated) is bool and type(truncated) is bool and isinstance(info, dict)
        assert isinstance(reward, (int, float)) and not isinstance(reward, np.generic)
        if terminated or truncated:
            e.step(None)
            continue
        assert reward == 0
        assert obs["observation"].dtype == np.uint8 and obs["action_mask"].dtype == np.int8
        e.step(np.int64(random_action(rng, obs)))
    assert e.agents == []


def test_seeding_is_reproducible_and_only_touches_the_generator():
    a, b = raw_env(), raw_env()
    a.reset(seed=3)
    b.reset(seed=3)
    assert a.game_seed == b.game_seed
    first = a.game_seed
    a.reset()
    b.reset()
    assert a.game_seed == b.game_seed != first
    a.reset(seed=4)
    assert a.game_seed != first
    with pytest.warns(UserWarning, match=r"reset option\(s\) \['options'\] ignored"):
        a.reset(seed=3, options={"options": 1})
    assert a.game_seed == first and a.rules.preset == "academie"


def test_every_agent_gets_its_own_observation():
    e = raw_env(rules="academie3")
    e.reset(seed=2)
    game = e.engine
    acting = e.agent_selection
    for p, agent in enumerate(e.possible_agents):
        obs = e.observe(agent)
        hand = np.flatnonzero(obs["observation"][OFFSETS["hand"]])
        assert set(hand.tolist()) == game.state.hands[p]
        assert e.observation_space(agent).contains(obs)
        if agent == acting:
            assert obs["action_mask"].any()
            assert np.array_equal(obs["action_mask"], game.legal_mask().astype(np.int8))
            assert obs["observation"][OFFSETS["phase"]][0] > 0
        else:
            assert not obs["action_mask"].any()
            assert obs["observation"][OFFSETS["phase"]][0] == 0
        # Seats are relative: the observing agent is seat 0 of the dealer block.
        dealer = game.state.deal.dealer
        assert obs["observation"][OFFSETS["dealer"]][0] == (dealer - p) % 3


def test_an_illegal_action_ends_the_game_with_a_penalty():
    e = env()
    e.reset(seed=0)
    obs, *_ = e.last()
    actor = e.agent_selection
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    e.step(illegal)
    assert all(e.terminations.values()) and all(e.truncations.values())
    final = {}
    for agent in e.agent_iter():
        _, reward, terminated, truncated, _ = e.last()
        assert terminated and truncated
        final[agent] = reward
        e.step(None)
    assert final == {actor: -1.0, ("player_1" if actor == "player_0" else "player_0"): 0.0}


def test_raw_env_refuses_illegal_and_wrapped_env_out_of_range_actions():
    e = raw_env()
    e.reset(seed=0)
    mask = e.observe(e.agent_selection)["action_mask"]
    with pytest.raises(ValueError, match="illegal action"):
        e.step(int(np.flatnonzero(mask == 0)[0]))
    w = env()
    w.reset(seed=0)
    with pytest.raises(ValueError, match=r"the action 43 is out of range: give an action id, an integer 0\.\.42"):
        w.step(43)
    for call in (lambda e: e.step(0), lambda e: e.observe("player_0"), lambda e: e.last(), lambda e: e.render()):
        with pytest.raises(RuntimeError, match=r"call reset\(seed=\.\.\.\) before"):
            call(env())  # before reset: a clear error, not PettingZoo's bare AssertionError


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_one_deal_from_a_start_score_agrees_with_the_reference(preset):
    rules = make_rules(preset)
    P = rules.players
    start = {"imperiales": [3] * P, "points": [20] + [8] * (P - 1), "dealer": P - 1}
    e = env(rules=preset, episode="deal", start=start)
    rng = np.random.default_rng(1)
    for seed in range(4):
        e.reset(seed=seed)
        raw = e.unwrapped
        moves, final = play_out(e, rng)
        ref = Game(rules, seed=raw.game_seed, dealer=start["dealer"], imperiales=start["imperiales"],
                   points=start["points"], single_deal=True)
        for player, action in moves:
            assert ref.current_player == player
            ref.step(action)
        assert ref.is_over and len(ref.history) == 1
        assert ref.imperiales == raw.imperiales and ref.points == raw.points and ref.winner == raw.winner
        assert abs(sum(final.values())) < 1e-6
        if ref.winner is None:
            value = [i + p / 24 for i, p in zip(ref.imperiales, ref.points, strict=True)]
            begin = [i + p / 24 for i, p in zip(start["imperiales"], start["points"], strict=True)]
            change = [v - b for v, b in zip(value, begin, strict=True)]
            for p in range(P):
                others = (sum(change) - change[p]) / (P - 1)
                assert final[f"player_{p}"] == pytest.approx(change[p] - others, abs=1e-6)


def test_deal_start_can_be_given_at_reset_and_is_validated():
    e = raw_env(episode="deal")
    e.reset(seed=0, options={"start": {"imperiales": [2, 1], "points": [4, 0], "dealer": 0}})
    assert e.engine.start_imperiales == [2, 1] and e.engine.start_dealer == 0
    e.reset(seed=0)
    assert e.engine.start_imperiales == [0, 0] and e.engine.start_points == [0, 0]
    for bad in ({"imperiales": [5, 0]}, {"points": [24, 0]}, {"dealer": 2}, {"score": 1}, {"points": [1]}):
        with pytest.raises(ValueError):
            raw_env(episode="deal", start=bad)
    with pytest.raises(ValueError, match="episode='deal'"):
        raw_env(start={"points": [0, 0]})
    with pytest.raises(ValueError):
        raw_env(episode="match")


def test_a_game_over_before_the_first_decision_is_terminal_at_reset():
    # One award from the target: a turned honour ends the game for the dealer at once.
    start = {"imperiales": [4, 4], "points": [20, 20], "dealer": 0}
    e = env(episode="deal", start=start)
    for seed in range(40):
        e.reset(seed=seed)
        if e.unwrapped.winner is not None:
            break
    else:
        pytest.fail("no turned honour in 40 deals")
    assert all(e.terminations.values())
    final = {}
    for agent in e.agent_iter():
        final[agent] = e.last()[1]
        e.step(None)
    assert final == {"player_0": 1.0, "player_1": -1.0}


def test_ansi_rendering_reads_like_the_table():
    e = env(render_mode="ansi")
    e.reset(seed=7)
    rng = np.random.default_rng(7)
    for _ in range(30):
        obs, *_ = e.last()
        e.step(random_action(rng, obs))
    text = e.render()
    raw = e.unwrapped
    seat = raw.possible_agents.index(e.agent_selection)
    assert isinstance(text, str)
    for word in ("Trump:", "Score:", "Tricks:", "Hand", "Moves:", "impériale", "counter"):
        assert word in text
    other = 1 - seat
    held = len(raw.engine.state.hands[other])
    assert f"player_{other} holds {held} card" in text
    with pytest.warns(UserWarning, match="render mode"):
        assert raw_env().render() is None  # no render mode: a warning, nothing drawn


def test_decisions_per_second_benchmark():
    assert aec_decisions_per_second("academie", seconds=0.2) > 100


def test_writing_into_the_mask_handed_out_changes_no_rule():
    """A caller that zeroes (or edits) the action_mask it got still plays a legal move legally, and
    an illegal one stays illegal: the rule is judged on the mask as the env gave it."""
    e = env(episode="deal")
    e.reset(seed=0)
    obs, *_ = e.last()
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    obs["action_mask"][:] = 0
    e.step(legal)
    assert not any(e.terminations.values()) and set(e.rewards.values()) == {0}
    obs, *_ = e.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs["action_mask"][illegal] = 1
    e.step(illegal)
    assert all(e.terminations.values())
