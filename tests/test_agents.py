"""The agent interface, the registry, and every agent's legality on thousands of positions."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_agents.base import Agent, AgentError, make_agent
from imperiale_agents.observation_view import decode, trick_winner
from imperiale_agents.policies.heuristic import HeuristicAgent
from imperiale_agents.policies.random_agent import RandomAgent
from imperiale_cli.devtools.differential import random_legal
from imperiale_env.batch import BatchGame
from imperiale_env.core import actions as act
from imperiale_env.core.cards import parse_card
from imperiale_env.core.observation import OBS_SIZE
from imperiale_env.core.rules import make_rules

PRESETS = ["academie", "academie3", "foster", "imperijal"]


def test_registry_builds_every_kind():
    for spec, cls_name in [("random", "RandomAgent"), ("heuristic", "HeuristicAgent"), ("pimc", "PIMCAgent"),
                           ("pimc:4", "PIMCAgent")]:
        agent = make_agent(spec)
        assert type(agent).__name__ == cls_name
        assert isinstance(agent, Agent)
        assert isinstance(agent.name, str) and agent.name
    assert make_agent("pimc:4").samples == 4
    assert make_agent("pimc:4:9").horizon == 9 and make_agent("pimc:4:9").name == "pimc:4:9"


BAD_SPECS = ["", "alphazero", "pimc:x", "pimc:0", "pimc:4:13", "pimc:4:9:1", "neural", "neural:/no/such/checkpoint.pt"]


@pytest.mark.parametrize("spec", BAD_SPECS)
def test_registry_errors_are_clear(spec):
    with pytest.raises(AgentError) as err:
        make_agent(spec)
    assert str(err.value)


def _random_positions(preset: str, games: int, seed: int):
    """Observations and masks of every decision of random games (all phases)."""
    bg = BatchGame(make_rules(preset), games)
    bg.reset(seed)
    rng = np.random.default_rng(seed)
    while not bg.done.all():
        active = np.flatnonzero(~bg.done)
        mask = bg.legal_action_mask()
        yield bg, bg.observe()[active], mask[active]
        bg.step(random_legal(rng, mask))


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("spec", ["random", "heuristic"])
def test_agents_play_legal_actions(preset, spec):
    agent = make_agent(spec, preset)
    rng = np.random.default_rng(0)
    positions = 0
    for _, obs, mask in _random_positions(preset, 48, 2):
        assert obs.shape[1] == OBS_SIZE
        a = agent.act(obs, mask, rng)
        assert a.dtype == np.int64 and a.shape == (len(obs),)
        assert mask[np.arange(len(a)), a].all()
        positions += len(a)
    assert positions > 2000


def test_random_is_uniform_over_legal():
    mask = np.zeros((20000, act.NUM_ACTIONS), dtype=bool)
    mask[:, [3, 7, 40]] = True
    a = RandomAgent().act(np.zeros((20000, OBS_SIZE), np.uint8), mask, np.random.default_rng(1))
    counts = np.bincount(a, minlength=act.NUM_ACTIONS)[[3, 7, 40]]
    assert counts.sum() == 20000
    assert (np.abs(counts / 20000 - 1 / 3) < 0.02).all()


def test_heuristic_is_deterministic_and_shows():
    agent = HeuristicAgent("academie")
    for _, obs, mask in _random_positions("academie", 32, 4):
        a = agent.act(obs, mask, np.random.default_rng(1))
        b = agent.act(obs, mask, np.random.default_rng(2))
        assert np.array_equal(a, b)
        question = mask[:, act.SHOW]
        assert (a[question] == act.SHOW).all()
        assert not (a == act.SINK).any()


def test_heuristic_declares_longest_then_highest_suit():
    agent = HeuristicAgent("academie")
    for _, obs, mask in _random_positions("academie", 32, 6):
        v = decode(obs)
        rows = np.flatnonzero(v.phase == 1)
        if not len(rows):
            continue
        a = agent.act(obs[rows], mask[rows], np.random.default_rng(0))
        for r, choice in zip(rows, a, strict=True):
            suits = [v.hand[r, s * 9 : s * 9 + 9] for s in range(4)]
            key = [(x.sum(), (x * np.array([10, 10, 10, 11, 10, 9, 8, 7, 6])).sum()) for x in suits]
            assert key[choice - act.POINT_BASE] == max(key)


def _play_obs(rules, hand: str, trick: list[str], leader_seat: int, trump: int, played_extra: str = ""):
    """A hand-made play-phase observation (two players): ``trick`` on the table in its first
    trick, ``played_extra`` the opponent's cards of earlier tricks."""
    from imperiale_env.core.observation import read, write

    o = np.zeros((1, OBS_SIZE), dtype=np.uint8)
    extra = played_extra.split()
    done = len(extra)
    for c in hand.split():
        read(o, "hand")[0, parse_card(c)] = 1
    for k, c in enumerate(extra):
        read(o, "played_by")[0, parse_card(c)] = 2
        read(o, "played_in")[0, parse_card(c)] = 1 + k
    for k, c in enumerate(trick):
        seat = (leader_seat + k) % 2
        read(o, "played_by")[0, parse_card(c)] = 1 + seat
        read(o, "played_in")[0, parse_card(c)] = 1 + done
    if trick:
        read(o, "leaders")[0, done] = 1 + leader_seat
    write(o, "trump", trump)
    write(o, "phase", 3)
    write(o, "tricks_played", done)
    write(o, "players", 2)
    mask = np.zeros((1, act.NUM_ACTIONS), dtype=bool)
    return o, mask


def test_heuristic_wins_cheaply_and_protects_honours():
    rules = make_rules("academie")
    agent = HeuristicAgent(rules)
    # Clubs trump; the opponent leads 9H; I hold KH QH 10H: cheapest winner is 10H.
    obs, mask = _play_obs(rules, "KH QH 10H 8S 7C", ["9H"], 1, 3)
    for c in ("KH", "QH", "10H"):
        mask[0, parse_card(c)] = True
    assert agent.act(obs, mask)[0] == parse_card("10H")
    # Void in hearts with trumps 7C (honour) and 9C: trumping with the low honour secures it.
    obs, mask = _play_obs(rules, "7C 9C 8S", ["9H"], 1, 3)
    for c in ("7C", "9C"):
        mask[0, parse_card(c)] = True
    assert agent.act(obs, mask)[0] == parse_card("7C")
    # The opponent led the KC (trumps); I cannot beat it: 8C rather than the 7C honour.
    obs, mask = _play_obs(rules, "7C 8C 9S", ["KC"], 1, 3)
    for c in ("7C", "8C"):
        mask[0, parse_card(c)] = True
    assert agent.act(obs, mask)[0] == parse_card("8C")
    v = decode(obs)
    assert trick_winner(v)[0][0] == parse_card("KC")


def test_heuristic_strength_against_random():
    """A quick sanity check of strength: many single deals, duplicate seats."""
    from imperiale_agents.tournament.match import run_tournament

    result = run_tournament(["random", "heuristic"], "academie", groups=150, seed=3, single_deal=True)
    pair = result.pairs[0]
    assert pair.margin_ci[1] < 0  # random's margin per deal is negative with confidence


def test_human_agent_takes_typed_moves_and_refuses_bad_ones():
    from imperiale_agents.policies.human import HumanAgent

    batch = BatchGame("academie", 3)
    batch.reset(5)
    rng = np.random.default_rng(5)
    typed = iter(["", "zz", "99", "1"] * 3 + ["1"] * 600)
    said: list[str] = []
    human = HumanAgent(input_fn=lambda prompt: next(typed), print_fn=said.append)
    assert isinstance(make_agent("human"), HumanAgent)
    for _ in range(150):  # questions, points and cards, through the whole first deal
        mask = batch.legal_action_mask()
        live = np.flatnonzero(~batch.done)
        if not len(live):
            break
        actions = np.zeros(3, dtype=np.int64)
        actions[live] = human.act(batch.observe()[live], mask[live], rng)
        # "1" chooses the first legal move
        assert np.array_equal(actions[live], np.argmax(mask[live], axis=1))
        batch.step(actions)
    assert sum("Not a legal move" in line for line in said) == 9
    assert any("\nHand " in line for line in said)
    with pytest.raises(ValueError, match="no legal action"):
        human.act(batch.observe()[:1], np.zeros((1, 43), dtype=bool), rng)


def test_human_agent_reads_codes_and_answers():
    from imperiale_agents.policies.human import parse

    legal = [parse_card("KH"), parse_card("10S"), act.SHOW, act.HIDE, act.point_action(1), act.SINK]
    assert parse("kh", legal) == parse_card("KH") and parse("10s", legal) == parse_card("10S")
    assert parse("y", legal) == act.SHOW and parse("hide", legal) == act.HIDE
    assert parse("point h", legal) == act.point_action(1) and parse("sink", legal) == act.SINK
    assert parse("QS", legal) is None and parse("point s", legal) is None and parse("7", legal) is None
