"""Ray: tournaments and self-play rollouts on a local Ray instance give the local results, survive a
killed worker, and fail clearly on a cluster that cannot be reached.

One local instance (2 CPUs) serves the whole module: starting one costs seconds.  Its workers get
this checkout on their ``PYTHONPATH`` (they must import the code under test, not an installed
copy), and this module is pickled by value so that the test agents defined here reach them.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from imperiale_agents.parallel.ray_cluster import ClusterError, connect  # noqa: E402
from imperiale_agents.parallel.ray_tournament import RayMatchRunner  # noqa: E402
from imperiale_agents.tournament.match import run_tournament  # noqa: E402
from imperiale_agents.tournament.report import markdown  # noqa: E402
from imperiale_cli.cli import main  # noqa: E402
from imperiale_env.core.rules import make_rules  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def local_ray():
    # The workers inherit PYTHONPATH from this process, without a runtime_env: that would have Ray's
    # runtime-env agent prepare every worker, and the raylet exits when an agent fails (Ray issue
    # 49162), which ends this whole test session with exit code 1 and no report (seen once in CI, in
    # this module).  A small object store: what travels here is a few MB.
    earlier = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), earlier) if p)
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 1024**2)
    finally:
        if earlier is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = earlier
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    ray.shutdown()


class FirstLegal:
    """A deterministic agent: the lowest legal action id."""

    name = "first"

    def act(self, obs, mask, rng):
        return np.argmax(mask, axis=1).astype(np.int64)


class DiesOnce(FirstLegal):
    """Kills its own process the first time it is asked to act anywhere (a marker file remembers)."""

    name = "dies-once"

    def __init__(self, marker: str):
        self.marker = marker

    def act(self, obs, mask, rng):
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return super().act(obs, mask, rng)


def _comparable(result):
    """The result with its wall-clock times zeroed (they differ between any two runs)."""
    result.seconds = 0.0
    for t in result.timings.values():
        t.seconds = 0.0
    return result


def _assert_same(a, b):
    a, b = _comparable(a), _comparable(b)
    assert a.to_dict() == b.to_dict()
    assert markdown(a) == markdown(b)
    assert len(a.logs) == len(b.logs)
    for x, y in zip(a.logs, b.logs, strict=True):
        assert x.lineup == y.lineup
        for field in ("seat_agent", "seeds", "winner_seat", "deltas", "num_deals", "final_imperiales"):
            assert np.array_equal(getattr(x, field), getattr(y, field)), field


def test_ray_tournament_equals_the_local_one(local_ray):
    rules = make_rules("academie", target_imperiales=2)
    agents = ["random", "heuristic", FirstLegal()]
    local = run_tournament(agents, rules, groups=4, seed=7)
    remote = run_tournament(agents, rules, groups=4, seed=7, runner=RayMatchRunner())
    assert len(remote.logs) == 3
    _assert_same(local, remote)
    assert local.timings[0].decisions == remote.timings[0].decisions > 0


def test_a_killed_worker_has_its_match_redone_once(local_ray, tmp_path):
    rules = make_rules("academie", target_imperiales=2)
    marker = tmp_path / "died"
    agents = ["random", DiesOnce(str(marker)), "heuristic"]
    remote = run_tournament(agents, rules, groups=3, seed=3, single_deal=True, runner=RayMatchRunner())
    assert marker.exists()  # a worker did die
    local = run_tournament(agents, rules, groups=3, seed=3, single_deal=True)  # the marker is there: no death
    _assert_same(local, remote)
    assert [p.games for p in remote.pairs] == [6, 6, 6]  # each match counted once


def test_an_agent_error_in_a_task_is_raised_as_itself(local_ray):
    class Illegal(FirstLegal):
        name = "illegal"

        def act(self, obs, mask, rng):
            return np.full(len(obs), -1, dtype=np.int64)

    with pytest.raises(ValueError, match="returned action -1 in game 0; action ids are 0..42"):
        run_tournament(["random", Illegal()], "academie", groups=2, single_deal=True, runner=RayMatchRunner())


def test_cli_eval_ray_writes_the_local_results(local_ray, tmp_path, capsys):
    args = ["eval", "--agents", "random,heuristic", "--deals", "3", "--seed", "5", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    assert main([*args, "--ray", "--out", str(tmp_path / "ray")]) == 0
    capsys.readouterr()

    def load(name):
        data = json.loads((tmp_path / name / "results.json").read_text())
        data.pop("seconds")
        for t in data["decision_time_ms"].values():
            t.pop("ms_per_decision")
        return data

    assert load("local") == load("ray")


def test_unreachable_cluster_fails_fast_and_clearly(capsys):
    with pytest.raises(ClusterError, match="cannot reach the Ray cluster at '127.0.0.1:1'"):
        connect("127.0.0.1:1")
    with pytest.raises(ClusterError, match="bad Ray address 'nowhere'"):
        connect("nowhere")
    assert main(["eval", "--deals", "2", "--no-progress", "--ray", "127.0.0.1:1"]) == 2
    assert "cannot reach the Ray cluster" in capsys.readouterr().err


# ---------------------------------------------------------------------- training with rollout workers

TINY = dict(num_envs=16, num_steps=8, hidden=(32,), update_epochs=2, num_minibatches=2, eval_groups=4,
            eval_single_deal=True, plot=False, eval_every=0, progress=False, tensorboard=False, threads=1,
            pool_every=1, pool_size=2, p_pool=0.5, critic="perfect", rollout_workers=2, iterations=4,
            checkpoint_every=2)


def _train(tmp_path, name, *, resume=False, stop_after=None, **overrides):
    from imperiale_train.config import make_config
    from imperiale_train.run import train

    cfg = make_config(None, {**TINY, "run_dir": str(tmp_path / name), **overrides})
    return train(cfg, resume=resume, stop_after=stop_after)


def _metrics(run_dir: Path) -> list[dict]:
    """The metrics lines without the timings (``perf/``), which differ between any two runs."""
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if not k.startswith("perf/")} for line in lines]


def _weights(run_dir: Path) -> dict:
    from imperiale_train.checkpoint import load_checkpoint

    return load_checkpoint(run_dir / "checkpoint.pt")["model"]


def _assert_same_run(a: Path, b: Path) -> None:
    import torch

    assert _metrics(a) == _metrics(b)
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


@pytest.fixture(scope="module")
def straight_run(local_ray, tmp_path_factory):
    """Four iterations with two rollout workers, uninterrupted."""
    path = tmp_path_factory.mktemp("straight")
    result = _train(path, "run")
    assert result["iteration"] == 4
    return path / "run"


def test_two_worker_training_reruns_identically_and_resumes(straight_run, tmp_path):
    from imperiale_train.checkpoint import load_checkpoint

    _train(tmp_path, "killed", stop_after=3)  # left during iteration 4: the last checkpoint is iteration 2
    data = load_checkpoint(tmp_path / "killed" / "checkpoint.pt")
    assert data["iteration"] == 2 and data["rollout"]["iteration"] == 2 and len(data["rollout"]["workers"]) == 2
    assert _train(tmp_path, "killed", resume=True)["iteration"] == 4
    _assert_same_run(straight_run, tmp_path / "killed")
    assert len(_metrics(straight_run)) == 4 and _metrics(straight_run)[0]["global_step"] == 128


def test_a_killed_rollout_worker_is_restarted_and_its_rollout_redone(straight_run, tmp_path, monkeypatch):
    import imperiale_train.ray_rollout as ray_rollout

    class DiesOnceWorker(ray_rollout.RolloutWorker):
        marker = str(tmp_path / "died")

        def collect(self, weights, pool_box, pool_version, state_box, iteration):
            if self.index == 1 and iteration == 2 and not os.path.exists(self.marker):
                Path(self.marker).write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)
            return super().collect(weights, pool_box, pool_version, state_box, iteration)

    monkeypatch.setattr(ray_rollout, "RolloutWorker", DiesOnceWorker)
    assert _train(tmp_path, "dies")["iteration"] == 4
    assert (tmp_path / "died").exists()  # the worker did die, mid-run
    _assert_same_run(straight_run, tmp_path / "dies")


def test_rollout_workers_must_divide_num_envs(tmp_path):
    from imperiale_train.config import ConfigError, make_config

    with pytest.raises(ConfigError, match="rollout_workers=3 .*a divisor of num_envs=16"):
        make_config(None, {**TINY, "rollout_workers": 3})
    with pytest.raises(ConfigError, match="rollout_workers=-1"):
        make_config(None, {**TINY, "rollout_workers": -1})


def test_work_that_no_node_can_hold_fails_instead_of_waiting(local_ray, tmp_path):
    with pytest.raises(ClusterError, match="--workers 3 needs 1 x 3 CPU"):
        run_tournament(["random", "heuristic"], "academie", groups=2, workers=3, runner=RayMatchRunner())
    with pytest.raises(ClusterError, match="rollout_workers=4 needs 4 x 1 CPU"):
        _train(tmp_path, "too-many", rollout_workers=4)


def test_a_neural_agent_travels_as_its_network(straight_run, tmp_path):
    """``neural:PATH`` is sent built (the checkpoint need not exist on the workers' machines)."""
    import shutil

    path = tmp_path / "policy.pt"
    shutil.copy(straight_run / "checkpoint.pt", path)
    agents = ["heuristic", f"neural:{path}"]
    local = run_tournament(agents, "academie", groups=3, seed=2, single_deal=True)
    runner = RayMatchRunner()
    plan_agents = []
    original = runner.__call__

    def spy(plan, bar=None):
        plan_agents.extend(plan.agents)
        path.unlink()  # from here on only the built agent can play
        yield from original(plan, bar)

    remote = run_tournament(agents, "academie", groups=3, seed=2, single_deal=True, runner=spy)
    assert type(plan_agents[1]).__name__ == "NeuralAgent"
    _assert_same(local, remote)
