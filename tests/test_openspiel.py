"""The OpenSpiel game ``python_imperiale``: OpenSpiel's own checks on every preset, copies, the
ISMCTS resampler (every world agrees with the player's recall) and OpenSpiel's algorithms on it."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import imperiale_env.openspiel as ios
from imperiale_env import PRESET_NAMES
from imperiale_env.core.rules import RulesError


def _deal_one(state, rng: np.random.Generator) -> None:
    """One chance outcome drawn by its odds."""
    actions, probs = zip(*state.chance_outcomes(), strict=True)
    state.apply_action(int(rng.choice(actions, p=probs)))


def _random_state(game, rng: np.random.Generator, steps: int):
    """A state after ``steps`` random actions (chance by its odds), stopped at a player's turn."""
    state = game.new_initial_state()
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            _deal_one(state, rng)
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_openspiel_random_simulation_test_passes_on_every_preset(preset):
    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": preset})
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    assert game.num_players() == (3 if preset == "academie3" else 2)


def test_a_whole_game_episode_and_rules_fields_as_parameters():
    game = pyspiel.load_game(ios.SHORT_NAME, {"episode": "game", "target_imperiales": 1, "must_beat": "false",
                                               "honour_ranks": "K,Q,J,low"})
    assert game.rules.target_imperiales == 1 and not game.rules.must_beat
    assert game.rules.honour_ranks == ("K", "Q", "J", "low")
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize("params, message", [({"rules": "bridge"}, "unknown rules preset"),
                                             ({"episode": "rubber"}, "episode must be"),
                                             ({"must_beat": "yes"}, "is a flag"),
                                             ({"obs_type": "pixels"}, "obs_type must be one of bytes, features")])
def test_bad_parameters_are_named(params, message):
    with pytest.raises((RulesError, ValueError, pyspiel.SpielError), match=message):
        pyspiel.load_game(ios.SHORT_NAME, params)


def test_a_clone_plays_on_like_the_original():
    game = pyspiel.load_game(ios.SHORT_NAME)
    rng = np.random.default_rng(3)
    state = _random_state(game, rng, 40)
    twin = state.clone()
    assert twin.history() == state.history() and str(twin) == str(state)
    while not state.is_terminal():
        action = state.legal_actions()[0] if not state.is_chance_node() else state.chance_outcomes()[0][0]
        state.apply_action(action)
        twin.apply_action(action)
        assert twin.information_state_string(0) == state.information_state_string(0)
    assert twin.returns() == state.returns()


def test_tensors_are_our_observation():
    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": "foster"})
    state = _random_state(game, np.random.default_rng(4), 30)
    from imperiale_env.reference.observe import observe

    player = state.current_player()
    assert np.array_equal(state.observation_tensor(player), observe(state.engine, player))
    assert len(state.information_state_tensor(player)) == game.information_state_tensor_size()


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_features_are_the_tensor_with_obs_type_features(preset):
    """``obs_type=features``: the observation tensor is the envs' float features of the same view,
    its size the game's, each block a named view; OpenSpiel's own simulation test passes."""
    from imperiale_env.kernels.features import FEATURE_SIZE, policy_features, read_feature
    from imperiale_env.reference.observe import observe

    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": preset, "obs_type": "features"})
    assert game.observation_tensor_size() == FEATURE_SIZE
    state = _random_state(game, np.random.default_rng(5), 25)
    player = state.current_player()
    tensor = np.asarray(state.observation_tensor(player), dtype=np.float32)
    assert np.array_equal(tensor, policy_features(observe(state.engine, player))) and tensor.any()
    observer = game.make_py_observer()
    observer.set_from(state, player)
    assert np.array_equal(observer.dict["trick"], read_feature(tensor, "trick"))
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_resampled_world_agrees_with_the_players_recall(preset):
    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": preset})
    rng = np.random.default_rng(7)
    for steps in (30, 45, 60):
        state = _random_state(game, rng, steps)
        if state.is_terminal():
            continue
        player = state.current_player()
        for _ in range(3):
            world = ios.resample(state, player, rng)
            assert world.information_state_string(player) == state.information_state_string(player)
            assert world.legal_actions() == state.legal_actions()
            assert world.engine.state.hands[player] == state.engine.state.hands[player]


def test_a_world_of_a_whole_game_keeps_the_earlier_deals_and_the_recall():
    game = pyspiel.load_game(ios.SHORT_NAME, {"episode": "game"})
    rng = np.random.default_rng(0)
    state = _random_state(game, rng, 0)
    while not (len(state.engine.history) >= 2 and len(state.engine.state.actions) > 10):
        state = _random_state(game, rng, 0) if state.is_terminal() else state
        state.apply_action(int(rng.choice(state.legal_actions())))
        while state.is_chance_node():
            _deal_one(state, rng)
    player = state.current_player()
    world = ios.resample(state, player, rng)
    assert world.information_state_string(player) == state.information_state_string(player)
    assert world.engine.history[0].deal == state.engine.history[0].deal


def test_ismcts_bot_plays_a_deal():
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game(ios.SHORT_NAME)
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(5))
    bots = [ismcts.ISMCTSBot(game, evaluator, 2.0, 10, random_state=np.random.RandomState(p)) for p in range(2)]
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    while not state.is_terminal():
        if state.is_chance_node():
            _deal_one(state, rng)
        else:
            action = bots[state.current_player()].step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
    assert abs(sum(state.returns())) < 1e-9


def test_outcome_sampling_mccfr_runs():
    from open_spiel.python.algorithms import outcome_sampling_mccfr

    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": "imperijal"})
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    for _ in range(3):
        solver.iteration()
    policy = solver.average_policy()
    state = _random_state(game, np.random.default_rng(4), 30)
    probs = policy.action_probabilities(state)
    assert set(probs) == set(state.legal_actions()) and abs(sum(probs.values()) - 1) < 1e-9


def test_nfsp_trains_a_few_steps():
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import nfsp

    torch.manual_seed(0)
    env = rl_environment.Environment(pyspiel.load_game(ios.SHORT_NAME), seed=0)
    size = env.observation_spec()["info_state"][0]
    agents = [nfsp.NFSP(p, size, env.action_spec()["num_actions"], [16], 100, 100, min_buffer_size_to_learn=8,
                        batch_size=8, learn_every=8) for p in range(2)]
    for _ in range(2):
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            action = agents[player].step(step).action
            assert step.observations["legal_actions"][player].count(action) == 1
            step = env.step([action])
        for agent in agents:
            agent.step(step)
    assert all(len(a._reservoir_buffer) > 0 for a in agents)


def test_a_deal_starts_from_the_score_given_and_bad_scores_are_named():
    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": "foster", "imperiales": "3,1", "points": "20,0"})
    state = _random_state(game, np.random.default_rng(4), 1)
    assert state.engine.start_imperiales == [3, 1] and state.engine.start_points == [20, 0]
    assert "imp=[3, 1] pts=[20, " in state.information_state_string(0)  # the dealer may have a turned honour
    assert ios.rules_from_parameters(ios.game_parameters(game.rules)) == game.rules
    for bad in ({"imperiales": "5,0"}, {"points": "24,0"}, {"points": "1"}, {"imperiales": "a,b"}):
        with pytest.raises(ValueError, match="comma-separated"):
            pyspiel.load_game(ios.SHORT_NAME, bad)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_chance_deals_only_what_is_left_and_a_refused_outcome_changes_nothing(preset):
    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": preset, "episode": "deal"})
    players = game.num_players()
    state = game.new_initial_state()
    with pytest.raises(ValueError, match=f"the first dealer, a seat 0..{players - 1}; possible"):
        state.apply_action(players)
    state.apply_action(0)
    state.apply_action(5)
    for again in (5, 99):  # dealt already; no card (OpenSpiel itself refuses -1)
        with pytest.raises(ValueError, match="outcome .* is not possible here: chance chooses card 2 of the deal"):
            state.apply_action(again)
    assert state.history() == [0, 5] and 5 not in [c for c, _ in state.chance_outcomes()]
    rng = np.random.default_rng(3)
    while not state.is_terminal():
        if state.is_chance_node():
            _deal_one(state, rng)
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    ended = state.history()
    with pytest.raises(ValueError, match="the game is over .* a new state"):
        state.apply_action(ended[-1])
    assert state.history() == ended and state.chance_outcomes() == [] and state.legal_actions() == []


def test_the_observation_string_is_the_players_table_in_words():
    game = pyspiel.load_game(ios.SHORT_NAME, {"rules": "academie", "episode": "deal"})
    state = _random_state(game, np.random.default_rng(4), 30)
    player = state.current_player()
    text = state.observation_string(player)
    hand = sorted(state.engine.state.hands[player])
    other = sorted(state.engine.state.hands[1 - player])
    assert "Hand:" in text and "Trump:" in text and "Score:" in text
    assert all(ios.card_code(c) in text for c in hand)
    unseen = [ios.card_code(c) for c in other if ios.card_code(c) not in state.observation_string(1 - player)]
    assert not unseen  # the other seat's own view holds his cards
    known = set(state.engine.state.revealed[1 - player]) | {state.engine.state.deal.turned}
    tokens = set(text.replace(",", " ").split())
    assert not tokens & {ios.card_code(c) for c in other if c not in known}  # nothing of the hidden hand
    assert game.new_initial_state().observation_string(0).startswith("seat 0: the deal is being dealt")
