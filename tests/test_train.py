"""Self-play training: a tiny run, deterministic resume, masked sampling, per-seat GAE, configs."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from imperiale_env.batch import BatchGame  # noqa: E402
from imperiale_env.core.observation import OBS_SIZE, bounds  # noqa: E402
from imperiale_env.core.rules import make_rules  # noqa: E402
from imperiale_env.kernels.features import policy_features  # noqa: E402
from imperiale_train.checkpoint import CheckpointError, load_checkpoint, save_checkpoint  # noqa: E402
from imperiale_train.config import ConfigError, TrainConfig, make_config  # noqa: E402
from imperiale_train.model import MASK_VALUE, ActorCritic, masked_logits, sample_actions  # noqa: E402
from imperiale_train.rollout import OpponentPool, SelfPlayRollout  # noqa: E402
from imperiale_train.run import train  # noqa: E402

TINY = dict(num_envs=16, num_steps=8, hidden=(32,), update_epochs=2, num_minibatches=2, eval_groups=4,
            eval_single_deal=True, plot=False,
            eval_every=0, progress=False, tensorboard=False, threads=1, pool_every=1, pool_size=2, p_pool=0.5)


def tiny(tmp_path, name="run", **kw) -> TrainConfig:
    return make_config(None, {**TINY, "run_dir": str(tmp_path / name), **kw})


def test_tiny_run_writes_a_loadable_checkpoint(tmp_path):
    from imperiale_agents.policies.neural import NeuralAgent

    cfg = tiny(tmp_path, iterations=2, checkpoint_every=1, plot=True)
    result = train(cfg)
    assert result["iteration"] == 2 and "eval/win_rate_random" in result["eval"]
    agent = NeuralAgent(result["checkpoint"], greedy=True)
    bg = BatchGame(cfg.make_rules(), 32, auto_next_game=True)
    bg.reset(3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        mask = bg.legal_action_mask()
        a = agent.act(bg.observe(), mask, rng)
        assert mask[np.arange(32), a].all()
        bg.step(a)
    sampler = NeuralAgent(result["checkpoint"], greedy=False)
    mask = bg.legal_action_mask()
    assert mask[np.arange(32), sampler.act(bg.observe(), mask, rng)].all()
    assert (tmp_path / "run" / "metrics.jsonl").read_text().count("\n") == 2
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0


def _params(path):
    return load_checkpoint(path)["model"]


def test_resume_after_kill_matches_uninterrupted_run(tmp_path, critic="perfect"):
    straight = tiny(tmp_path, "straight", iterations=5, checkpoint_every=2, critic=critic, eval_every=2)
    train(straight)
    killed = tiny(tmp_path, "killed", iterations=5, checkpoint_every=2, critic=critic, eval_every=2)
    train(killed, stop_after=3)  # "killed" during iteration 4: the last checkpoint is iteration 2
    assert load_checkpoint(tmp_path / "killed" / "checkpoint.pt")["iteration"] == 2
    result = train(killed, resume=True)
    assert result["iteration"] == 5
    a, b = _params(tmp_path / "straight" / "checkpoint.pt"), _params(tmp_path / "killed" / "checkpoint.pt")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
    lines = lambda run: (tmp_path / run / "metrics.jsonl").read_text().splitlines()  # noqa: E731
    assert len(lines("killed")) == 5
    strip = lambda line: {k: v for k, v in __import__("json").loads(line).items() if not k.startswith("perf/")}  # noqa: E731
    assert [strip(x) for x in lines("straight")] == [strip(x) for x in lines("killed")]


def test_masked_sampling_never_picks_an_illegal_action():
    torch.manual_seed(0)
    model = ActorCritic((16,))
    rng = np.random.default_rng(0)
    n = 4000
    mask = rng.random((n, 43)) < 0.1
    mask[np.arange(n), rng.integers(43, size=n)] = True
    low, high = bounds(make_rules("academie"))  # random observations within the space
    obs = rng.integers(low, high.astype(np.int64) + 1, size=(n, OBS_SIZE)).astype(np.uint8)
    x = torch.from_numpy(policy_features(obs))
    with torch.no_grad():
        logits = model.logits(x, torch.from_numpy(mask))
        # Adversarial: the illegal actions' raw logits are huge.
        raw = model.actor.net(x) + 1e6 * torch.from_numpy(~mask).float()
        adversarial = masked_logits(raw, torch.from_numpy(mask))
    for lg in (logits.numpy(), adversarial.numpy()):
        for _ in range(25):
            a = sample_actions(lg, rng)
            assert mask[np.arange(n), a].all()
        assert mask[np.arange(n), sample_actions(lg, rng, greedy=True)].all()
    probs = torch.softmax(logits, -1).numpy()
    assert (probs[~mask] == 0).all()
    _, entropy, _ = model.evaluate(x, torch.from_numpy(mask), None, torch.from_numpy(mask.argmax(1)))
    assert torch.isfinite(entropy).all()


def test_rewards_are_credited_to_each_seats_last_transition():
    cfg = make_config(None, {**TINY, "num_envs": 8, "num_steps": 100, "p_pool": 0.0})
    rng = np.random.default_rng(1)
    ro = SelfPlayRollout(cfg, cfg.make_rules(), torch.device("cpu"), rng)
    model = ActorCritic((8,))
    batch, stats = ro.collect(model, OpponentPool(2, (8,), "relu", torch.device("cpu")), rng)
    T, n = ro.T, ro.n
    # Walk every chain: a chain stays in one slot and one seat, moves forward in time, ends at a
    # terminal (rewarded) transition or at the rollout's end (bootstrapped).
    nxt = ro.next_index
    starts = set(range(T * n)) - set(nxt[nxt >= 0].tolist())
    for j in starts:
        while nxt[j] >= 0:
            assert nxt[j] > j and nxt[j] % n == j % n and ro.seats.flat[nxt[j]] == ro.seats.flat[j]
            assert not ro.dones[j] and ro.rewards[j] == 0
            j = nxt[j]
    assert ro.dones.sum() > 0
    # Zero-sum: a finished two-player deal credits opposite rewards to the two seats.
    assert abs(ro.rewards.sum()) < 1e-4
    assert stats["rollout/episodes"] > 0 and len(batch) == T * n


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_the_pool_plays_each_row_under_its_own_snapshot(activation):
    """The pool's one batched pass (snapshots stacked, rows grouped and padded) gives each row the
    logits its own snapshot's network gives it, after evictions and a reload from a checkpoint."""
    from imperiale_train.model import FEATURE_SIZE, Policy

    torch.manual_seed(3)
    nets = [Policy((16, 8), activation) for _ in range(5)]
    pool = OpponentPool(3, (16, 8), activation, torch.device("cpu"))
    for i, net in enumerate(nets):
        pool.add(net, i)
    assert pool.ids.tolist() == [2, 3, 4]
    reloaded = OpponentPool(3, (16, 8), activation, torch.device("cpu"))
    reloaded.load_state_dict(pool.state_dict())
    ids = np.array([4, 2, 2, 3, 4, 4, 2])
    x = torch.rand(len(ids), FEATURE_SIZE)
    mask = torch.rand(len(ids), 43) > 0.5
    with torch.no_grad():
        want = torch.cat([nets[i](x[j:j + 1], mask[j:j + 1]) for j, i in enumerate(ids)])
    for p in (pool, reloaded):
        got = p.logits(ids, x, mask)
        assert torch.allclose(got, want, atol=1e-5) and torch.equal(got == MASK_VALUE, ~mask)


def test_bad_configs_fail_clearly(tmp_path):
    with pytest.raises(ConfigError, match="unknown config key.*'learning_rat'.*allowed: .*lr"):
        make_config(None, ["learning_rat=1"])
    with pytest.raises(ConfigError, match="num_envs='many'.*an int"):
        make_config(None, ["num_envs=many"])
    with pytest.raises(ConfigError, match="critic='oracle'.*plain, perfect"):
        make_config(None, ["critic=oracle"])
    with pytest.raises(ConfigError, match="rules='poker'.*academie"):
        make_config(None, ["rules=poker"])
    with pytest.raises(ConfigError, match="p_pool=1.5"):
        make_config(None, ["p_pool=1.5"])
    with pytest.raises(ConfigError, match="not KEY=VALUE"):
        make_config(None, ["lr"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("lr: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        make_config(bad)
    bad.write_text("num_steps: 8\nbogus: 1\n")
    with pytest.raises(ConfigError, match="'bogus'.*bad.yaml"):
        make_config(bad)
    cfg = make_config(None, ["hidden=64,32", "single_deal=false", "lr=1e-4", "iterations=1e3"])
    assert cfg.hidden == (64, 32) and cfg.single_deal is False and cfg.lr == 1e-4 and cfg.iterations == 1000


def test_default_config_file_loads():
    from imperiale_train.config import default_config_path

    path = default_config_path()
    assert path is not None
    make_config(path)
    make_config(path.parent / "ppo_gpu.yaml")


def test_corrupt_or_foreign_checkpoints_fail_clearly(tmp_path):
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(tmp_path / "junk.pt")
    torch.save({"hello": 1}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not an imperiale-ppo checkpoint"):
        load_checkpoint(tmp_path / "other.pt")
    save_checkpoint(tmp_path / "old.pt", {"config": {}, "iteration": 0, "model": {}})
    data = torch.load(tmp_path / "old.pt", weights_only=True)
    data["obs_size"] = 100
    torch.save(data, tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match="observations of 100"):
        load_checkpoint(tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")


def test_resume_refuses_a_different_config(tmp_path):
    train(tiny(tmp_path, iterations=1))
    with pytest.raises(ConfigError, match="lr="):
        train(tiny(tmp_path, iterations=2, lr=0.01), resume=True)
    with pytest.raises(ConfigError, match="--resume"):
        train(tiny(tmp_path, iterations=1))


def test_cli_train_reports_bad_keys(capsys):
    from imperiale_cli.cli import main

    assert main(["train", "nonsense=1"]) == 2
    assert "unknown config key" in capsys.readouterr().err


def test_resume_after_a_real_kill(tmp_path):
    """SIGKILL a training process after its first checkpoint, resume, and match a straight run.

    A tiny iteration takes a few milliseconds, so the run is long enough (40 iterations) that the
    kill lands before its end even on a loaded machine; the test checks that it did.
    """
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    overrides = {**TINY, "iterations": 40, "checkpoint_every": 1}
    args = [f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in overrides.items()]
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [sys.executable, "-m", "imperiale_cli", "train", f"run_dir={tmp_path / 'killed'}", *args]
    proc = subprocess.Popen(cmd, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    metrics = tmp_path / "killed" / "metrics.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if metrics.exists() and metrics.read_text().count("\n") >= 2:
            break
        time.sleep(0.005)
    assert proc.poll() is None, f"the run ended before the kill: {proc.stderr.read().decode()[-2000:]}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    start = load_checkpoint(tmp_path / "killed" / "checkpoint.pt")["iteration"]
    assert 1 <= start < 40
    train(make_config(None, {**overrides, "run_dir": str(tmp_path / "killed")}), resume=True)
    train(make_config(None, {**overrides, "run_dir": str(tmp_path / "straight")}))
    a, b = _params(tmp_path / "straight" / "checkpoint.pt"), _params(tmp_path / "killed" / "checkpoint.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_make_agent_neural_reports_a_bad_checkpoint(tmp_path):
    from imperiale_agents.base import AgentError, make_agent

    (tmp_path / "junk.pt").write_bytes(b"junk")
    with pytest.raises(AgentError, match="corrupt"):
        make_agent(f"neural:{tmp_path / 'junk.pt'}")


def test_training_minutes_count_imitation_rounds_and_ppo_iterations():
    from imperiale_train.plot import training_minutes

    rows = [
        {"iteration": 0, "imitation_round": 1, "global_step": 0, "perf/label_s": 50.0, "perf/imitation_update_s": 10.0},
        {"iteration": 0, "imitation_round": 2, "global_step": 0, "perf/label_s": 100.0,
         "perf/imitation_update_s": 20.0, "perf/eval_s": 999.0},  # evaluation time is not training time
        {"iteration": 1, "global_step": 600, "perf/steps_per_s": 10.0},
        {"iteration": 2, "global_step": 1200, "perf/steps_per_s": 20.0},
    ]
    assert training_minutes(rows) == [1.0, 3.0, 4.0, 4.5]
