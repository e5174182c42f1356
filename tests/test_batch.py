"""The batched engine: exact agreement with the reference engine, determinism, masks, observations."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_cli.devtools.differential import compare, random_legal
from imperiale_env.batch import BatchGame
from imperiale_env.core import actions as act
from imperiale_env.core.observation import OBS_SIZE, OFFSETS
from imperiale_env.core.rules import PRESET_NAMES, make_rules
from imperiale_env.reference.game import Game


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_agrees_with_reference_on_a_thousand_games(preset):
    assert compare(preset, 1000, seed=7, observations=False) > 100_000


@pytest.mark.parametrize(
    "overrides",
    [
        {"turned_imperiale": True, "fallen_imperiale": "tricks"},
        {"target_imperiales": 2},
        {"players": 3, "preset": "imperijal"},
        {"carte_blanche_ends_deal": False, "protect_turned_honour": False},
        {"preset": "foster", "declaration_timing": "before_play"},
    ],
)
def test_agrees_with_reference_under_overrides(overrides):
    overrides = dict(overrides)
    rules = make_rules(overrides.pop("preset", "academie"), **overrides)
    compare(rules, 300, seed=11, observations=False)  # observations: test_differential, every variant


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_single_deals_from_a_given_score_agree(preset):
    rules = make_rules(preset)
    start = ([4] * rules.players, [20] * rules.players, 1)
    compare(rules, 500, seed=3, single_deal=True, start=start)


def play_random(batch: BatchGame, seed: int, steps: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        mask = batch.legal_action_mask()
        a = random_legal(rng, mask)
        trace.append(a)
        batch.step(a)
    return trace


def test_same_seed_same_games():
    a, b = BatchGame("academie", 64), BatchGame("academie", 64)
    a.reset(5)
    b.reset(5)
    for x, y in zip(play_random(a, 1, 200), play_random(b, 1, 200), strict=True):
        assert np.array_equal(x, y)
    assert np.array_equal(a.observe(), b.observe())
    assert np.array_equal(a.imperiales, b.imperiales)


def test_game_seed_gives_the_same_game_whatever_the_batch_size():
    big = BatchGame("foster", 32)
    big.reset(9)
    seeds = big.seed.copy()
    small = BatchGame("foster", 1)
    small.reset(seeds[17:18])
    # Deal and first decision are those of the lone game with that seed.
    assert np.array_equal(big.dealt[17], small.dealt[0])
    assert big.turned[17] == small.turned[0]
    ref = Game("foster", seed=int(seeds[17]))
    assert [set(np.flatnonzero([(int(m) >> c) & 1 for c in range(36)])) for m in small.dealt[0]] == [
        set(h) for h in ref.state.deal.hands
    ]


def test_illegal_action_is_refused_with_the_legal_alternatives():
    batch = BatchGame("academie", 4)
    batch.reset(0)
    mask = batch.legal_action_mask()
    bad = np.argmin(mask, axis=1)  # an illegal id in every game
    with pytest.raises(ValueError, match="illegal action in 4 game"):
        batch.step(bad)
    with pytest.raises(ValueError, match="expected 4 actions"):
        batch.step(np.zeros(3, dtype=int))


def test_masks_never_empty_before_the_end_and_games_restart():
    batch = BatchGame("academie3", 256, auto_next_game=True)
    batch.reset(1)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(1500):
        mask = batch.legal_action_mask()
        assert mask.any(axis=1).all()
        rewards, terminated = batch.step(random_legal(rng, mask))
        finished += int(terminated.sum())
        assert np.allclose(rewards.sum(axis=1), 0.0)
        assert np.all(rewards[terminated].max(axis=1) == 1.0)
    assert finished > 50


def test_observation_layout():
    batch = BatchGame("academie", 8)
    batch.reset(2)
    obs = batch.observe()
    assert obs.shape == (8, OBS_SIZE) and obs.dtype == np.uint8
    hand = obs[:, OFFSETS["hand"]]
    assert np.all(hand.sum(axis=1) == 12)
    assert np.all(obs[:, OFFSETS["trump"]][:, 0] == batch.trump)
    buf = np.empty_like(obs)
    assert batch.observe(out=buf) is buf and np.array_equal(buf, obs)
    # The hand block holds exactly the cards of the acting player.
    for i in range(8):
        p = batch.current_player[i]
        cards = np.flatnonzero(hand[i])
        assert sum(1 << int(c) for c in cards) == int(batch.hands[i, p])


def test_observation_follows_the_play():
    batch = BatchGame("academie", 16)
    batch.reset(4)
    rng = np.random.default_rng(4)
    for _ in range(60):
        obs = batch.observe()
        mask = batch.legal_action_mask()
        plays = mask[:, : act.NUM_ACTIONS - 7].any(axis=1)
        # Every legal card is in the hand.
        assert np.all(obs[plays][:, OFFSETS["hand"]][mask[plays][:, :36]] == 1.0)
        batch.step(random_legal(rng, mask))
    played = batch.observe()[:, OFFSETS["played_by"]] > 0
    hand = batch.observe()[:, OFFSETS["hand"]]
    assert played.any() and not (played & (hand > 0)).any()


def test_score_blocks_are_capped():
    """A finished game can hold 4 + 2 impériales of 5, or 24+ points left by the winning award:
    the observation caps them at the target and at 24, inside the space's bounds."""
    batch = BatchGame("foster", 2)
    batch.reset(0)
    batch.imperiales[:] = [[6, 1], [2, 3]]
    batch.points[:] = [[32, 0], [5, 23]]
    obs = batch.observe()
    seat = batch.current_player
    expected = [5, 1] if seat[0] == 0 else [1, 5]
    assert obs[0, OFFSETS["imperiales"]][:2].tolist() == expected
    assert obs[0, OFFSETS["points"]][:2].tolist() == ([24, 0] if seat[0] == 0 else [0, 24])


def test_final_observations_and_restart_from_the_start_score():
    batch = BatchGame("academie", 32, auto_next_game=True, single_deal=True, keep_final_obs=True)
    batch.reset(3, imperiales=np.array([2, 1]), points=np.array([8, 12]))
    rng = np.random.default_rng(3)
    ended = 0
    while ended < 40:
        movers = batch.current_player.copy()
        _, terminated = batch.step(random_legal(rng, batch.legal_action_mask()))
        if terminated.any():
            rows = np.flatnonzero(terminated)
            final = batch.final_observation[rows]
            # The final view is the last mover's: his own hand block is empty after the 12th trick.
            played_all = final[:, OFFSETS["tricks_played"]][:, 0] == 12
            assert np.all(final[played_all][:, OFFSETS["hand"]].sum(axis=1) == 0)
            assert np.all(movers[rows] == batch.last_player[rows])
            # Restarted games begin from the score given to reset (a turned honour may follow).
            assert batch.start_imperiales[rows].tolist() == [[2, 1]] * len(rows)
            assert batch.start_points[rows].tolist() == [[8, 12]] * len(rows)
            ended += len(rows)
