"""Policy-weighted worlds (agents/search/play_likelihood.py): the opponent's observations rebuilt from the
agent's are the engine's, illegal plays rule a world out, and ``pimc:N:infer`` plays
legally and reproducibly."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from helpers import check_weighed_labels

from imperiale_agents import champions
from imperiale_agents.base import AgentError, make_agent
from imperiale_agents.observation_view import decode
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_agents.policies.random_agent import RandomAgent
from imperiale_agents.search.play_likelihood import play_log_likelihood, resample, their_decisions
from imperiale_env.batch import BatchGame
from imperiale_env.core.cards import NUM_CARDS
from imperiale_env.core.observation import BLOCKS, read, write
from imperiale_env.core.rules import make_rules

TWO_PLAYER = ("academie", "foster", "imperijal")
#: What the elder cannot know at his first lead when the dealer declares after it (agents/search/play_likelihood.py).
DECLARED_AFTER_FIRST_LEAD = ("shown_by", "shown_items", "imperiales", "points")


def _hand(bits: int) -> np.ndarray:
    return np.array([(int(bits) >> c) & 1 for c in range(NUM_CARDS)], dtype=bool)


def _play_and_check(preset: str, games: int, seed: int) -> int:
    """Play ``games`` deals (heuristic and random mixed); at every card decision rebuild every past
    decision of the opponent from the observation alone and check it is what the engine showed
    him.  Returns the checks made."""
    rules = make_rules(preset)
    bg = BatchGame(rules, games, single_deal=True)
    bg.reset(np.arange(games) + seed)
    players = [HeuristicAgent(rules), RandomAgent()]
    rng = np.random.default_rng(seed)
    seen: list[dict[int, list]] = [{0: [], 1: []} for _ in range(games)]  # each seat's card decisions
    checks = 0
    while not bg.done.all():
        obs, mask = bg.observe(), bg.legal_action_mask()
        v = decode(obs)
        actions = np.zeros(games, dtype=np.int64)
        for g in np.flatnonzero(~bg.done):
            seat = int(bg.current_player[g])
            actions[g] = players[(g + seat) % 2].act(obs[g : g + 1], mask[g : g + 1], rng)[0]
            if v.phase[g] != 2:
                continue
            row = decode(obs[g : g + 1])
            their_now = _hand(bg.hands[g, 1 - seat])
            d = their_decisions(rules, obs[g], row, their_now[None])
            past = seen[g][1 - seat]
            assert len(d.card) == len(past)
            for k, (o, m, card) in enumerate(past):
                assert d.card[k] == card
                got = d.obs[k, 0].copy()
                if k == 0 and rules.declaration_timing != "before_play" and bg.dealer[g] == seat:
                    o = o.copy()
                    for name in DECLARED_AFTER_FIRST_LEAD:
                        write(o, name, 0)
                        write(got, name, 0)
                assert np.array_equal(got, o), [n for n in BLOCKS if not np.array_equal(read(got, n), read(o, n))]
                assert np.array_equal(d.mask[k, 0], m)
                checks += 1
            seen[g][seat].append((obs[g].copy(), mask[g].copy(), int(actions[g])))
        bg.step(actions)
    return checks


@pytest.mark.parametrize("preset", TWO_PLAYER)
def test_the_opponents_observations_are_rebuilt_exactly_from_the_observation(preset):
    assert _play_and_check(preset, games=12, seed=100) > 500


def test_three_players_are_refused():
    rules = make_rules("academie3")
    bg = BatchGame(rules, 1, single_deal=True)
    bg.reset(3)
    heuristic = HeuristicAgent(rules)
    while decode(bg.observe()).phase[0] != 2:
        bg.step(heuristic.act(bg.observe(), bg.legal_action_mask()))
    obs = bg.observe()
    with pytest.raises(ValueError, match="two players, not 3"):
        their_decisions(rules, obs[0], decode(obs), np.zeros((1, NUM_CARDS), bool))


def _uniform(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, -np.log(mask.sum(axis=1, keepdims=True)), -np.inf)


def test_a_world_where_a_play_was_illegal_gets_no_weight():
    """academie's must-beat rule: an opponent who followed my card with a lower card of its suit
    held no card of that suit that beats mine.  Give him one (an unseen card) and the world is out."""
    rules = make_rules("academie")
    bg = BatchGame(rules, 64, single_deal=True)
    bg.reset(np.arange(64) + 7)
    heuristic = HeuristicAgent(rules)
    found = 0
    while not bg.done.all():
        obs, mask = bg.observe(), bg.legal_action_mask()
        v = decode(obs)
        for g in np.flatnonzero((v.phase == 2) & (bg.current_player == 0) & ~bg.done):
            row = decode(obs[g : g + 1])
            their_now = _hand(bg.hands[g, 1])
            seen = row.hand[0] | row.played[0].any(axis=0) | row.turned[0] | their_now
            for k in range(int(row.tricks_played[0])):
                mine = int(np.flatnonzero((row.played_in[0] == k) & (row.played_by[0] == 0))[0])
                theirs = int(np.flatnonzero((row.played_in[0] == k) & (row.played_by[0] == 1))[0])
                beating = [c for c in range(9 * (mine // 9), mine) if not seen[c]]
                if row.leaders[0, k] == 0 and theirs // 9 == mine // 9 and theirs > mine and beating \
                        and their_now.any():
                    world = their_now.copy()
                    world[np.flatnonzero(their_now)[0]], world[beating[0]] = False, True
                    lp = play_log_likelihood(rules, obs[g], row, np.stack([their_now, world]), _uniform)
                    assert np.isfinite(lp[0]) and lp[1] == -np.inf
                    found += 1
                    break
        bg.step(heuristic.act(obs, mask))
    assert found > 5


def test_resample_follows_the_weights():
    rng = np.random.default_rng(0)
    idx = resample(np.array([-np.inf, 0.0, np.log(3.0)]), 4000, rng)
    assert not (idx == 0).any()
    assert 0.7 < (idx == 2).mean() < 0.8
    assert set(resample(np.full(3, -np.inf), 50, rng)) <= {0, 1, 2}


def test_infer_spec_plays_legally_and_reproducibly():
    pytest.importorskip("torch")
    rules = make_rules("academie")
    agent = make_agent("pimc:4:infer", rules)
    assert agent.name == "pimc:4:infer"
    assert make_agent("pimc:4:9:search:infer", rules).name == "pimc:4:9:search:infer"
    runs = []
    for workers in (1, 2):
        agent = make_agent("pimc:4:infer", rules, workers=workers)
        bg = BatchGame(rules, 3, single_deal=True)
        bg.reset(np.arange(3) + 40)
        rng = np.random.default_rng(1)
        chosen = []
        while not bg.done.all():
            obs, mask = bg.observe(), bg.legal_action_mask()
            a = agent.act(obs, mask, rng)
            live = ~bg.done
            assert mask[np.flatnonzero(live), a[live]].all()
            chosen.append(a[live].copy())
            bg.step(np.where(live, a, 0))
        runs.append(np.concatenate(chosen))
        agent.close()
    assert np.array_equal(*runs)  # the same games whatever the worker count


@pytest.mark.parametrize("spec, words", [("pimc:4:infer:search", "pimc:N[:K][:search][:infer|:voids|:belief|:fitted]"),
                                         ("pimc:infer", "pimc:N[:K][:search][:infer|:voids|:belief|:fitted]")])
def test_bad_infer_specs_say_what_is_allowed(spec, words):
    with pytest.raises(AgentError, match=re.escape(words)):
        make_agent(spec, "academie")


def test_infer_needs_two_players():
    pytest.importorskip("torch")
    with pytest.raises(AgentError, match="two players"):
        make_agent("pimc:4:infer", "academie3")


def test_imitation_labels_with_infer_are_the_same_whatever_the_worker_count():
    pytest.importorskip("torch")
    check_weighed_labels(make_rules("academie"), infer=make_agent("champion", "academie"))


@pytest.fixture
def champions_of_academie_only(tmp_path, monkeypatch):
    """A champions folder holding academie's champion alone: the other presets have none."""
    shutil.copy(champions.champion_path("academie"), tmp_path / "academie.npz")
    monkeypatch.setattr(champions, "CHAMPIONS_DIR", tmp_path)


def test_imitation_infer_needs_two_players_and_a_champion(champions_of_academie_only):
    pytest.importorskip("torch")
    from imperiale_train.config import ConfigError, make_config

    assert make_config(rules="academie", imitation_rounds=1, imitation_infer=True).imitation_infer
    for preset in ("academie3", "imperijal"):
        with pytest.raises(ConfigError, match="imitation_infer"):
            make_config(rules=preset, imitation_rounds=1, imitation_infer=True)


def test_infer_without_a_champion_says_why(champions_of_academie_only):
    pytest.importorskip("torch")
    with pytest.raises(AgentError, match="'infer' models the opponent with the shipped champion.*imperijal"):
        make_agent("pimc:4:infer", "imperijal")


def test_every_block_with_seats_in_it_declares_how_they_are_written():
    """The rebuild exchanges the seats of every block by its declaration (``Block.seats``), so a block
    that holds seats and does not say so would keep the agent's seats in the opponent's view."""
    from imperiale_env.core.observation import LAYOUT, MAX_SEATS

    for block in LAYOUT:
        if block.shape[0] == MAX_SEATS:
            assert block.seats == "rows", block.name
        if "1 + the seat" in block.meaning:
            assert block.seats == "values", block.name
        if "seat" in block.meaning and block.shape == (1,):
            assert block.seats == "seat", block.name
    assert {b.seats for b in LAYOUT} == {"", "rows", "values", "seat", "others"}
