"""Mirrored deals: each deal played twice with the learner's seat moved, each seat rewarded
against the same seat of the other play, and a run that resumes exactly."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from imperiale_env.batch import BatchGame  # noqa: E402
from imperiale_train.checkpoint import load_checkpoint  # noqa: E402
from imperiale_train.config import ConfigError, make_config  # noqa: E402
from imperiale_train.mirror import MirroredDeals  # noqa: E402
from imperiale_train.model import ActorCritic  # noqa: E402
from imperiale_train.rollout import CURRENT, OpponentPool, SelfPlayRollout  # noqa: E402
from imperiale_train.run import train  # noqa: E402

TINY = dict(num_envs=16, num_steps=8, hidden=(32,), update_epochs=1, num_minibatches=2, eval_groups=2,
            eval_single_deal=True, plot=False, eval_every=0, progress=False, tensorboard=False, threads=1,
            pool_every=1, pool_size=2, p_pool=0.5, mirrored_deals=True)


def _seat(learner: np.ndarray, opponent: np.ndarray, rng: np.random.Generator):
    def draw(rows):
        learner[rows] = rng.integers(2, size=len(rows))
        opponent[rows] = rng.integers(-1, 3, size=len(rows))
    return draw


@pytest.mark.parametrize("preset", ["academie", "imperijal", "academie3"])
def test_every_deal_is_dealt_twice_with_the_learner_seat_moved(preset):
    """The twins of a rollout hold the same cards at the same seats, the learner one seat on, the
    same kind of opponent; across the run each deal is started at most twice."""
    cfg = make_config(None, {**TINY, "rules": preset, "num_envs": 12, "num_steps": 40, "p_pool": 0.5})
    rng = np.random.default_rng(3)
    ro = SelfPlayRollout(cfg, cfg.make_rules(), torch.device("cpu"), rng)
    m, P = ro.mirror, ro.P
    first = np.flatnonzero(~m.second)
    twin = np.array([np.flatnonzero(m.second & (m.deal == m.deal[i]))[0] for i in first])
    assert len(first) == len(twin) == 6
    assert (ro.bg.hands[first] == ro.bg.hands[twin]).all() and (ro.bg.dealer[first] == ro.bg.dealer[twin]).all()
    assert (ro.learner_seat[twin] == (ro.learner_seat[first] + 1) % P).all()
    assert (ro.opponent[twin] == ro.opponent[first]).all()
    started = [m.play_keys().copy()]
    model = ActorCritic((8,))
    pool = OpponentPool(2, (8,), "relu", torch.device("cpu"))
    pool.add(model.actor, 0)
    for _ in range(3):
        ro.collect(model, pool, rng)
        started.append(m.play_keys().copy())
    keys = np.unique(np.concatenate(started))
    deals, plays = np.unique(keys // 2, return_counts=True)
    assert plays.max() == 2 and (plays == 2).mean() > 0.8


def test_a_seat_is_rewarded_against_the_same_seat_of_the_other_play():
    """A play that ends after its twin gets its return minus the twin's, and the twin's terminal
    transitions of this rollout lose it; a play whose twin is still running is kept, and left out
    of training if the rollout ends first."""
    m = MirroredDeals(4, 2)
    rng = np.random.default_rng(0)
    learner, opponent = np.zeros(4, np.int64), np.full(4, CURRENT, np.int64)
    seeds = m.start(np.arange(4), rng, learner, opponent, _seat(learner, opponent, rng))
    assert (seeds[:2] == seeds[2:]).all() and list(m.deal) == [0, 1, 0, 1] and list(m.second) == [0, 0, 1, 1]
    m.begin_rollout()
    credited = np.zeros(20, np.float32)
    # Deal 0's first play ends (its seats' last transitions 3 and 4), then its second (7 and 8).
    r_first = np.array([[0.5, -0.5]], np.float32)
    out = m.settle(np.array([0]), r_first, np.array([[3, 4]]), credited)
    assert np.array_equal(out, r_first)
    credited[[3, 4]] += out[0]
    assert list(m.unmatched()) == [0]
    r_second = np.array([[-0.25, 0.25]], np.float32)
    out = m.settle(np.array([2]), r_second, np.array([[7, 8]]), credited)
    credited[[7, 8]] += out[0]
    assert np.allclose(credited[[7, 8]], r_second[0] - r_first[0])
    assert np.allclose(credited[[3, 4]], r_first[0] - r_second[0])
    assert len(m.unmatched()) == 0
    # Both plays of deal 1 ending at one step: each against the other.
    both = np.array([[1.0, -1.0], [0.0, 0.0]], np.float32)
    out = m.settle(np.array([1, 3]), both, np.array([[9, 10], [11, 12]]), credited)
    assert np.allclose(out, [[1.0, -1.0], [-1.0, 1.0]])
    # A first play whose twin has not ended by the rollout's end is not trained; its twin is
    # credited against it in the next rollout.
    seeds = m.start(np.array([0, 2]), rng, learner, opponent, _seat(learner, opponent, rng))
    assert seeds[0] == seeds[1] and m.deal[0] == m.deal[2] == 2
    m.settle(np.array([0]), r_first, np.array([[5, 6]]), credited)
    assert list(m.unmatched()) == [2 * 2]
    m.begin_rollout()
    assert len(m.unmatched()) == 0
    out = m.settle(np.array([2]), r_second, np.array([[1, 2]]), np.zeros(20, np.float32))
    assert np.allclose(out, r_second - r_first)


def test_the_rollout_credits_every_seat_zero_in_all_when_twins_end_together():
    """Pure self-play, whole deals inside one rollout: each seat's rewards over the rollout are
    its returns minus the twins', so they add up to zero seat by seat (and they do not without
    mirrored deals)."""
    totals = {}
    for mirrored in (True, False):
        cfg = make_config(None, {**TINY, "num_envs": 8, "num_steps": 96, "p_pool": 0.0, "mirrored_deals": mirrored})
        rng = np.random.default_rng(5)
        ro = SelfPlayRollout(cfg, cfg.make_rules(), torch.device("cpu"), rng)
        _, stats = ro.collect(ActorCritic((8,)), OpponentPool(2, (8,), "relu", torch.device("cpu")), rng)
        seat0 = ro.seats.reshape(-1) == 0
        totals[mirrored] = (ro.rewards[seat0 & ro.dones].sum(), ro.dones.sum(), stats)
    assert totals[True][1] >= 16 and abs(totals[True][0]) < 1e-5
    assert totals[True][2]["rollout/mirror_dropped"] == 0.0
    assert abs(totals[False][0]) > 1e-3


def test_a_mirrored_run_resumes_exactly(tmp_path):
    straight = make_config(None, {**TINY, "run_dir": str(tmp_path / "straight"), "iterations": 4,
                                  "checkpoint_every": 2})
    train(straight)
    killed = make_config(None, {**TINY, "run_dir": str(tmp_path / "killed"), "iterations": 4, "checkpoint_every": 2})
    train(killed, stop_after=3)
    assert load_checkpoint(tmp_path / "killed" / "checkpoint.pt")["iteration"] == 2
    train(killed, resume=True)
    a = load_checkpoint(tmp_path / "straight" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "killed" / "checkpoint.pt")
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k


def test_mirrored_deals_need_single_deals():
    with pytest.raises(ConfigError, match="mirrored_deals.*single_deal=false"):
        make_config(None, {"mirrored_deals": True, "single_deal": False})


def test_restart_deals_the_seed_given_and_refuses_a_game_in_progress():
    bg = BatchGame("academie", 4, single_deal=True)
    bg.reset(7)
    lone = BatchGame("academie", 1, single_deal=True)
    lone.reset(np.array([12345]))
    with pytest.raises(ValueError, match="in progress"):
        bg.restart(np.array([1]), np.array([12345]))
    while not bg.done[1]:
        mask = bg.legal_action_mask()
        bg.step(mask.argmax(1))
    bg.restart(np.array([1]), np.array([12345]))
    assert (bg.hands[1] == lone.hands[0]).all() and bg.dealer[1] == lone.dealer[0] and not bg.done[1]
    for bad in (np.array([-1]), np.array([2**63], dtype=np.uint64)):
        with pytest.raises(ValueError, match="seeds must be one integer"):
            bg.restart(np.array([2]), bad)
    with pytest.raises(ValueError, match="rows must be distinct slots"):
        bg.restart(np.array([4]), np.array([1]))
