"""The batched driver loop (imperiale_agents.driver) and the three tables that use it.

The pinned digests were computed with the code before the loop was written once (commit 03d8027,
when tournaments, rollouts and imitation each had their own loop): the same seeds must still give
the same games, rollouts and labels.  A change that alters them on purpose (the engine, the
observation, an agent) recomputes them with ``_tournament_digest``, ``_rollout_digests`` and
``_labels_digest`` below and says why in its commit."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from imperiale_agents.driver import Turn, act_by, checked_actions, drive
from imperiale_agents.errors import AgentMisbehaved
from imperiale_agents.tournament.match import run_tournament
from imperiale_env.batch import BatchGame
from imperiale_env.core.observation import OBS_SIZE
from imperiale_env.core.rules import make_rules

torch = pytest.importorskip("torch")

from imperiale_train.config import make_config  # noqa: E402
from imperiale_train.imitate import SearchPool, label_deals  # noqa: E402
from imperiale_train.model import ActorCritic  # noqa: E402
from imperiale_train.rollout import OpponentPool, SelfPlayRollout  # noqa: E402


def _digest(*arrays: np.ndarray) -> str:
    """The values' digest; integers as int64, so that a narrower dtype (the batch state's int8 seats
    and int16 scores, state version 3) keeps the digests pinned when the values are the same."""
    d = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        d.update(np.ascontiguousarray(a.astype(np.int64) if a.dtype.kind in "iu" else a).tobytes())
    return d.hexdigest()[:16]


def _first_legal(turn: Turn) -> np.ndarray:
    return turn.mask.argmax(axis=1)


# ---------------------------------------------------------------------- the loop itself


def test_drive_plays_every_game_to_its_end_and_tells_each_end_once():
    bg = BatchGame(make_rules("academie"), 5, single_deal=True)
    bg.reset(3)
    seen_live, ends = [], np.zeros(5, dtype=np.int64)

    def record(turn: Turn, actions: np.ndarray) -> None:
        assert (turn.seat == bg.current_player).all()  # read before the step
        assert turn.mask[np.flatnonzero(turn.live), actions[turn.live]].all()
        seen_live.append(turn.live.copy())

    def settle(turn: Turn, rewards: np.ndarray, terminated: np.ndarray) -> None:
        assert turn.live[terminated].all()
        ends[terminated] += 1

    steps = drive(bg, _first_legal, record=record, settle=settle)
    assert bg.done.all() and (ends == 1).all()
    assert steps == len(seen_live) and seen_live[0].all() and steps > 12


def test_drive_for_a_number_of_steps_writes_the_observations_in_place():
    bg = BatchGame(make_rules("academie"), 3, auto_next_game=True)
    bg.reset(4)
    out = np.zeros((6, 3, OBS_SIZE), dtype=np.uint8)
    copies = []
    assert drive(bg, _first_legal, record=lambda turn, a: copies.append(turn.obs.copy()), steps=6, obs_out=out) == 6
    assert (out == np.stack(copies)).all() and out.any()
    with pytest.raises(ValueError, match=r"obs_out must hold \(steps, 3\).*shape \(5, 3, \d+\) with steps=6"):
        drive(bg, _first_legal, steps=6, obs_out=out[:5])


def test_act_by_hands_each_actor_its_own_games_in_label_order():
    calls = []

    def act(label: int, rows: np.ndarray) -> np.ndarray:
        calls.append((label, rows.tolist()))
        return np.full(len(rows), 10 + label)

    actions = act_by(np.array([-1, 2, 0, 2, -1]), act, np.full(5, 7, dtype=np.int64))
    assert calls == [(0, [2]), (2, [1, 3])]
    assert actions.tolist() == [7, 12, 10, 12, 7]


def test_checked_actions_name_the_agent_and_the_game():
    mask = np.zeros((2, 43), dtype=bool)
    mask[:, 5] = True
    games = np.array([4, 9])
    assert checked_actions([5, 5], mask, "agent 'a'", games).tolist() == [5, 5]
    with pytest.raises(AgentMisbehaved, match=r"agent 'bot' returned \[5, 5, 5\] of shape \(3,\); act must return "
                                              r"one action id per game, shape \(2,\)"):
        checked_actions([5, 5, 5], mask, "agent 'bot'", games)
    with pytest.raises(AgentMisbehaved, match=r"agent 'bot' chose action 6 \(.*\) in game 9, which is illegal there"):
        checked_actions([5, 6], mask, "agent 'bot'", games)
    with pytest.raises(AgentMisbehaved, match="agent 'bot' returned action -1 in game 4; action ids are 0..42"):
        checked_actions([-1, 5], mask, "agent 'bot'", games)
    with pytest.raises(AgentMisbehaved, match="float64 actions .* a float or a bool is not read as one"):
        checked_actions([5.0, 5.0], mask, "agent 'bot'", games)  # never truncated silently
    with pytest.raises(AgentMisbehaved, match="in game 1 of the batch"):
        checked_actions([5, 6], mask, "agent 'bot'")  # without the games' numbers: the row


# ---------------------------------------------------------------------- the same games as before


def _tournament_digest() -> tuple[str, list[float]]:
    r = run_tournament(["random", "heuristic"], "academie", groups=2, seed=11)
    arrays = [x for log in r.logs for x in (log.winner_seat, log.deltas, log.num_deals, log.final_imperiales,
                                           log.final_points)]
    return _digest(*arrays), r.wins.ravel().tolist()


def _rollout_digests() -> list[tuple[str, float]]:
    """Three collections with a pool, two fixed agents and the perfect critic; the network moves between them."""
    cfg = make_config(None, dict(num_envs=16, num_steps=24, hidden=(16,), p_pool=0.5, pool_size=2, critic="perfect",
                                 train_opponents=("heuristic", "random"), p_opponents=0.4, threads=1, progress=False))
    rng = np.random.default_rng(3)
    torch.manual_seed(0)
    ro = SelfPlayRollout(cfg, cfg.make_rules(), torch.device("cpu"), rng)
    model = ActorCritic((16,), "relu", "perfect")
    pool = OpponentPool(2, (16,), "relu", torch.device("cpu"))
    out = []
    for it in range(3):
        pool.add(model.actor, it)
        ro.refresh_pool(pool)
        batch, _ = ro.collect(model, pool, rng)
        out.append((_digest(ro.actions, ro.seats, ro.masks, ro.train, ro.next_index, ro.dones, ro.rewards,
                            ro.learner_seat, ro.opponent), float(batch.advantages.sum())))
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.05 * torch.randn_like(p))
    ro.close()
    return out


def _labels_digest() -> tuple[int, str]:
    with SearchPool(1) as pool:
        labels = label_deals(make_rules("academie"), 3, np.random.default_rng(5), pool, samples=2, perfect=True,
                             reward_scale=0.5)
    return len(labels), _digest(labels.mask, labels.hidden, labels.action, labels.ret,
                                np.nan_to_num(labels.values, nan=-99))


def test_a_tournament_plays_the_games_it_played_before():
    digest, wins = _tournament_digest()
    assert digest == "9a8419bdd173220a" and wins == [0.0, 0.0, 4.0, 0.0]


def test_a_rollout_collects_what_it_collected_before():
    got = _rollout_digests()
    # Pinned again for feature version 2 and the shared trunk (the first collection, at the near-uniform
    # initial policy, is the games it always was), and for the pool's batched pass: its stacked matrix
    # products round differently from one linear layer a snapshot, which turned a sample in the third.
    assert [d for d, _ in got] == ["59c3eea3a33c6213", "63cb83ae3c51a9d8", "d2d1d01573f3bbe4"]
    assert np.allclose([a for _, a in got], [-16.6680, -14.1891, -6.7938], atol=1e-3)


def test_imitation_labels_the_decisions_it_labelled_before():
    assert _labels_digest() == (60, "57b7edc0da1a779d")
