"""The training loop's side of ``rollout_workers``: a lost cluster leaves a resumable checkpoint.

The Ray collector is replaced by a stand-in (the single-process rollout behind the same
interface) that can lose its cluster on a given call, so this runs without Ray.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import imperiale_train.ray_rollout as ray_rollout  # noqa: E402
from imperiale_agents.parallel.ray_cluster import ClusterError  # noqa: E402
from imperiale_train.checkpoint import load_checkpoint  # noqa: E402
from imperiale_train.config import make_config  # noqa: E402
from imperiale_train.rollout import SelfPlayRollout  # noqa: E402
from imperiale_train.run import train  # noqa: E402

TINY = dict(num_envs=16, num_steps=8, hidden=(32,), update_epochs=1, num_minibatches=2, eval_groups=2,
            eval_single_deal=True, plot=False, eval_every=0, progress=False, tensorboard=False, threads=1,
            pool_every=1, pool_size=2, p_pool=0.5, rollout_workers=1, iterations=4, checkpoint_every=0)


class StandIn:
    """The interface of :class:`RayRollout` over one in-process rollout; ``lose_at``: the call
    (1-based) on which the cluster is lost, before anything changes."""

    lose_at: int | None = None

    def __init__(self, cfg, rules, device):
        self.inner = SelfPlayRollout(cfg, rules, device, np.random.default_rng([cfg.seed, 99]))
        self.calls = 0

    def collect(self, model, pool, rng):
        self.calls += 1
        if self.calls == self.lose_at:
            raise ClusterError("lost the Ray cluster (test): connection reset")
        return self.inner.collect(model, pool, rng)

    def refresh_pool(self, pool):
        self.inner.refresh_pool(pool)

    def state(self):
        return self.inner.state()

    def load_state(self, state):
        self.inner.load_state(state)

    def close(self):
        """Nothing to end: no actors."""


def test_a_lost_cluster_leaves_a_checkpoint_that_resumes_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(ray_rollout, "RayRollout", StandIn)
    train(make_config(None, {**TINY, "run_dir": str(tmp_path / "straight")}))
    lossy = make_config(None, {**TINY, "run_dir": str(tmp_path / "lossy")})
    monkeypatch.setattr(StandIn, "lose_at", 3)
    with pytest.raises(ClusterError, match="lost the Ray cluster"):
        train(lossy)
    assert load_checkpoint(tmp_path / "lossy" / "checkpoint.pt")["iteration"] == 2  # checkpoint_every=0 wrote none
    monkeypatch.setattr(StandIn, "lose_at", None)
    assert train(lossy, resume=True)["iteration"] == 4
    a = load_checkpoint(tmp_path / "straight" / "checkpoint.pt")["model"]
    b = load_checkpoint(tmp_path / "lossy" / "checkpoint.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)

    def metrics(run):
        return [{k: v for k, v in json.loads(line).items() if not k.startswith("perf/")}
                for line in (tmp_path / run / "metrics.jsonl").read_text().splitlines()]

    assert metrics("straight") == metrics("lossy")


def test_a_cluster_lost_before_the_first_iteration_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(ray_rollout, "RayRollout", StandIn)
    monkeypatch.setattr(StandIn, "lose_at", 1)
    with pytest.raises(ClusterError):
        train(make_config(None, {**TINY, "run_dir": str(tmp_path / "run")}))
    assert not (tmp_path / "run" / "checkpoint.pt").exists()
