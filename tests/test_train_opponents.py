"""Training against fixed agents (train_opponents, p_opponents) and starting from a checkpoint (init_from)."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from imperiale_agents.policies.heuristic import HeuristicAgent  # noqa: E402
from imperiale_train.checkpoint import load_checkpoint  # noqa: E402
from imperiale_train.config import ConfigError, make_config  # noqa: E402
from imperiale_train.model import ActorCritic  # noqa: E402
from imperiale_train.rollout import CURRENT, FIXED, OpponentPool, SelfPlayRollout  # noqa: E402
from imperiale_train.run import _start_from, train  # noqa: E402

TINY = dict(num_envs=16, num_steps=8, hidden=(32,), update_epochs=1, num_minibatches=2, eval_groups=2,
            eval_single_deal=True, plot=False, eval_every=0, progress=False, tensorboard=False, threads=1,
            pool_every=1, pool_size=2, p_pool=0.5, eval_opponents=("random",))


def tiny(tmp_path, name="run", **kw):
    return make_config(None, {**TINY, "run_dir": str(tmp_path / name), **kw})


def _collect(cfg, seed=0):
    rng = np.random.default_rng(seed)
    rollout = SelfPlayRollout(cfg, cfg.make_rules(), torch.device("cpu"), rng)
    batch, stats = rollout.collect(ActorCritic(cfg.hidden), OpponentPool(2, cfg.hidden, "relu", torch.device("cpu")),
                                   rng)
    return rollout, batch, stats


def test_games_against_a_fixed_agent_are_its_moves_and_train_only_the_learner(tmp_path):
    cfg = tiny(tmp_path, train_opponents=("heuristic",), p_opponents=1.0)  # 8 steps: no game ends
    rollout, batch, stats = _collect(cfg)
    assert (rollout.opponent == FIXED).all()  # p_opponents=1: every game is against the heuristic
    fixed = rollout.seats != rollout.learner_seat[None, :]
    assert fixed.any() and (~fixed).any()
    assert (rollout.train == ~fixed).all()  # the heuristic's decisions are not trained on
    assert len(batch) == int((~fixed).sum())
    heuristic = HeuristicAgent(cfg.make_rules())
    rng = np.random.default_rng(1)
    for t in range(cfg.num_steps):  # every decision of the heuristic's seat is the heuristic's choice
        rows = np.flatnonzero(fixed[t])
        assert (rollout.actions[t, rows] == heuristic.act(rollout.obs[t, rows], rollout.masks[t, rows], rng)).all()
    assert stats["rollout/opponent_games"] == 0  # none ended yet


def test_with_one_opponent_seat_the_third_seat_is_the_current_policy_and_trained(tmp_path):
    """academie3, opponent_seats=1: the heuristic holds the seat after the learner's only; the learner's
    seat and the seat after the heuristic's are the current policy's, both trained."""
    cfg = tiny(tmp_path, rules="academie3", train_opponents=("heuristic",), p_opponents=1.0, opponent_seats=1)
    rollout, batch, _ = _collect(cfg)
    rel = (rollout.seats - rollout.learner_seat[None, :]) % 3
    fixed = rel == 1
    assert fixed.any() and (rel == 2).any() and (rel == 0).any()
    assert (rollout.train == ~fixed).all()  # two learning seats, the heuristic's untrained
    assert len(batch) == int((~fixed).sum())
    heuristic = HeuristicAgent(cfg.make_rules())
    rng = np.random.default_rng(1)
    same = np.zeros_like(fixed)
    for t in range(cfg.num_steps):
        same[t] = rollout.actions[t] == heuristic.act(rollout.obs[t], rollout.masks[t], rng)
    assert same[fixed].all()  # the heuristic's seat plays the heuristic's choices
    assert not same[rel == 2].all()  # the third seat does not: it is the current policy's
    with pytest.raises(ConfigError, match="opponent_seats"):
        tiny(tmp_path, rules="academie", train_opponents=("heuristic",), p_opponents=1.0, opponent_seats=2).validate()


def test_ended_games_against_fixed_agents_are_counted_apart(tmp_path):
    cfg = tiny(tmp_path, train_opponents=("heuristic",), p_opponents=1.0, num_steps=60)  # deals end
    rollout, _, stats = _collect(cfg)
    assert stats["rollout/opponent_games"] > 0 and np.isfinite(stats["rollout/learner_return_vs_opponents"])
    assert stats["rollout/pool_games"] == 0 and np.isnan(stats["rollout/abs_return"])
    assert stats["rollout/episodes"] == stats["rollout/opponent_games"]  # every ended game is counted
    assert (rollout.opponent == FIXED).all()  # new games drew a fixed agent again
    assert rollout.train.mean() == pytest.approx(0.5, abs=0.1)  # the learner's seat only


def test_without_fixed_agents_the_opponents_are_drawn_as_before(tmp_path):
    """No train_opponents: no extra draws, so a run's games do not depend on the feature."""
    cfg = tiny(tmp_path)
    a = SelfPlayRollout(cfg, cfg.make_rules(), torch.device("cpu"), np.random.default_rng(5))
    rng = np.random.default_rng(5)
    rng.integers(2**63)  # the batch's seed, as SelfPlayRollout draws it
    seats = rng.integers(cfg.make_rules().players, size=cfg.num_envs)
    assert (a.learner_seat == seats).all() and (a.opponent == CURRENT).all()


def test_a_run_against_fixed_agents_resumes_exactly(tmp_path):
    kw = dict(iterations=3, checkpoint_every=1, num_steps=20, train_opponents=("heuristic", "random"), p_opponents=0.6)
    train(tiny(tmp_path, "straight", **kw))
    killed = tiny(tmp_path, "killed", **kw)
    train(killed, stop_after=2)
    train(killed, resume=True)
    a = load_checkpoint(tmp_path / "straight" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "killed" / "checkpoint.pt")
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    rows = [json.loads(x) for x in (tmp_path / "straight" / "metrics.jsonl").read_text().splitlines()]
    assert sum(r["rollout/opponent_games"] for r in rows) > 0


@pytest.mark.parametrize("bad, says", [
    ({"p_opponents": 0.5}, "p_opponents"),
    ({"train_opponents": ("heuristc",), "p_opponents": 0.5}, "train_opponents"),
    ({"train_opponents": ("pimc:0",), "p_opponents": 0.5}, "train_opponents"),
    ({"train_opponents": ("heuristic",), "p_opponents": 0.5, "rollout_workers": 2}, "rollout_workers"),
    ({"p_opponents": 1.5}, "p_opponents"),
    ({"opponent_seats": 1}, "opponent_seats"),
])
def test_bad_opponent_settings_fail_before_training(tmp_path, bad, says):
    with pytest.raises(ConfigError, match=says):
        train(tiny(tmp_path, **bad))
    assert not (tmp_path / "run").exists()


def test_init_from_starts_from_the_checkpoint_weights(tmp_path):
    train(tiny(tmp_path, "source", iterations=1))
    source = load_checkpoint(tmp_path / "source" / "checkpoint.pt")
    cfg = tiny(tmp_path, "tuned", iterations=1, init_from=str(tmp_path / "source" / "checkpoint.pt"))
    model = ActorCritic(cfg.hidden)
    _start_from(cfg, model)
    for k, v in model.state_dict().items():
        assert torch.equal(v, source["model"][k]), k
    tuned = train(cfg)  # and the run trains on from there, saving init_from in its config
    assert load_checkpoint(tuned["checkpoint"])["config"]["init_from"] == cfg.init_from


def test_init_from_refuses_a_missing_file_or_another_network(tmp_path):
    with pytest.raises(ConfigError, match="init_from: no checkpoint at"):
        train(tiny(tmp_path, init_from=str(tmp_path / "nothing.pt")))
    assert not (tmp_path / "run").exists()  # nothing made before the check
    train(tiny(tmp_path, "source", iterations=1))
    with pytest.raises(ConfigError, match="hidden=32 .* hidden=64"):
        train(tiny(tmp_path, hidden=(64,), init_from=str(tmp_path / "source" / "checkpoint.pt")))
