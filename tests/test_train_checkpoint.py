"""Checkpoints hold plain data only: the game batch as arrays, no pickle, and a crafted file runs nothing."""

from __future__ import annotations

import os
import pickle
from dataclasses import fields

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from imperiale_cli.cli import main  # noqa: E402
from imperiale_env.batch import BatchGame, BatchState  # noqa: E402
from imperiale_train.checkpoint import CheckpointError, load_checkpoint  # noqa: E402
from imperiale_train.config import make_config  # noqa: E402
from imperiale_train.run import train  # noqa: E402

TINY = dict(num_envs=8, num_steps=8, hidden=(16,), update_epochs=1, num_minibatches=2, eval_groups=2,
            eval_single_deal=True, plot=False, eval_every=0, progress=False, tensorboard=False, threads=1,
            pool_every=1, pool_size=2, p_pool=0.5, eval_opponents=("random",))


def tiny_run(tmp_path, name="run", **kw):
    cfg = make_config(None, {**TINY, "run_dir": str(tmp_path / name), **kw})
    return cfg, train(cfg)


def _random_actions(bg: BatchGame, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in bg.legal_action_mask()])


# ---------------------------------------------------------------- BatchGame.to_dict / from_dict


@pytest.mark.parametrize("preset", ["academie", "academie3", "foster", "imperijal"])
def test_a_restored_batch_plays_on_exactly_like_the_original(preset):
    bg = BatchGame(preset, 5, auto_next_game=True, keep_final_obs=True)
    bg.reset(11)
    rng = np.random.default_rng(0)
    for _ in range(70):
        bg.step(_random_actions(bg, rng))
    copy = BatchGame.from_dict(bg.to_dict())
    for _ in range(250):  # across deals and games (auto_next_game)
        assert (copy.legal_action_mask() == bg.legal_action_mask()).all()
        assert (copy.observe() == bg.observe()).all()
        a = _random_actions(bg, rng)
        for x, y in zip(bg.step(a), copy.step(a), strict=True):
            assert (x == y).all()
        assert (copy.final_observation == bg.final_observation).all()
    ours, theirs = bg.to_dict(), copy.to_dict()
    assert {k: v for k, v in ours.items() if k not in ("state", "explicit_deals")} == \
        {k: v for k, v in theirs.items() if k not in ("state", "explicit_deals")}
    assert ours["state"].keys() == theirs["state"].keys()
    for name, value in ours["state"].items():
        if name != "version":
            assert value.dtype == theirs["state"][name].dtype and (value == theirs["state"][name]).all(), name


def test_to_dict_saves_every_field_of_the_state():
    bg = BatchGame("academie", 3)
    bg.reset(1)
    d = bg.to_dict()
    # The state is one dataclass: every field is saved, so a field added later needs no edit here.
    assert set(d["state"]) == {f.name for f in fields(BatchState)} | {"version"}
    assert all(isinstance(v, np.ndarray) for k, v in d["state"].items() if k != "version")
    assert {k: d[k] for k in ("num_games", "next_game_id", "auto_next_game", "single_deal", "record_events",
                              "keep_history", "keep_final_obs")} == {
        "num_games": 3, "next_game_id": 3, "auto_next_game": 0, "single_deal": 0, "record_events": 0,
        "keep_history": 0, "keep_final_obs": 0}
    history = BatchGame("academie", 2, keep_history=True)
    history.reset(0)
    with pytest.raises(ValueError, match="keep_history"):
        BatchGame.from_dict(history.to_dict())


def test_from_dict_refuses_malformed_states():
    bg = BatchGame("foster", 4, auto_next_game=True)
    bg.reset(2)

    def broken(change):
        d = bg.to_dict()
        change(d)
        return d

    cases = [
        (lambda d: d.update(version=99), "version 99"),
        (lambda d: d.pop("state"), "lacks state"),
        (lambda d: d["state"].pop("hands"), r"missing \['hands'\]"),
        (lambda d: d["state"].update(evil=np.zeros(4)), r"unknown \['evil'\]"),
        (lambda d: d["state"].update(hands=d["state"]["hands"].astype(np.int64)), "field hands: expected uint64"),
        (lambda d: d["state"].update(stage=np.zeros(5, dtype=np.int64)), "field stage"),
        (lambda d: d["state"].update(seed="x"), "num_games=4 seeds"),
        (lambda d: d["state"].update(turned="x"), "field turned: expected int8"),
        (lambda d: d.update(next_game_id=1.5), "next_game_id"),
        (lambda d: d.update(num_games=0), "num_games=0 seeds"),
        (lambda d: d.update(num_games=10**9), "num_games=1000000000 seeds"),  # never allocated
        (lambda d: d.update(keep_history=1), "keep_history"),
        (lambda d: d.update(single_deal=7), "must be 0 or 1"),
        (lambda d: d.update(rules_json='{"preset": "poker"}'), "poker"),
        (lambda d: d.update(rules_json="{not json"), "not JSON"),
    ]
    for change, message in cases:
        with pytest.raises(ValueError, match=message):
            BatchGame.from_dict(broken(change))
    with pytest.raises(ValueError, match="version 'list'"):
        BatchGame.from_dict([1, 2])


# ---------------------------------------------------------------- checkpoint files


def _leaves(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            assert isinstance(k, (str, int)), k
            yield from _leaves(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _leaves(v)
    else:
        yield obj


def test_a_checkpoint_is_plain_data(tmp_path):
    cfg, result = tiny_run(tmp_path, iterations=2, critic="perfect")
    data = torch.load(result["checkpoint"], weights_only=True)  # no allowlisted globals
    kinds = {type(x) for x in _leaves(data)}
    assert kinds <= {torch.Tensor, int, float, bool, str, type(None)}, kinds
    assert data["version"] == 4 and data["obs_version"] == 1 and data["feature_version"] == 2
    assert data["rollout"]["bg"]["state"]["hands"].dtype == torch.uint64


class _Evil:
    """Unpickling this runs a shell command that creates the marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _resume(run_dir, capsys, *extra):
    code = main(["train", "--resume", f"run_dir={run_dir}", *extra])
    return code, capsys.readouterr().err


def test_a_malicious_checkpoint_runs_nothing(tmp_path, capsys):
    marker = tmp_path / "pwned"
    run = tmp_path / "run"
    run.mkdir()
    # 1. A torch checkpoint whose rollout is an object that runs code when unpickled.
    torch.save({"format": "imperiale-ppo", "version": 2, "obs_size": 485, "num_actions": 43, "config": {},
                "iteration": 1, "model": {}, "rollout": _Evil(marker)}, run / "checkpoint.pt")
    code, err = _resume(run, capsys)
    assert code == 2 and "corrupt or not a training checkpoint" in err
    # 2. A bare pickle of that object.
    (run / "checkpoint.pt").write_bytes(pickle.dumps(_Evil(marker), protocol=2))
    code, err = _resume(run, capsys)
    assert code == 2 and "corrupt" in err
    assert not marker.exists()
    # 3. A real checkpoint whose rollout is pickled bytes (what version 1 stored): bytes stay bytes.
    cfg, result = tiny_run(tmp_path, "real", iterations=1)
    data = torch.load(result["checkpoint"], weights_only=True)
    data["rollout"] = pickle.dumps({"bg": _Evil(marker)})
    data["iteration"] = 0
    torch.save(data, result["checkpoint"])
    code, err = _resume(tmp_path / "real", capsys, "iterations=2")
    assert code == 2 and "rollout state must hold" in err
    data["version"] = 1  # the checkpoints that stored pickles are of observation version 0
    torch.save(data, result["checkpoint"])
    code, err = _resume(tmp_path / "real", capsys, "iterations=2")
    assert code == 2 and "trained for observation version 0" in err
    assert not marker.exists()


def test_damaged_checkpoints_fail_clearly(tmp_path, capsys):
    cfg, result = tiny_run(tmp_path, iterations=1)
    path = tmp_path / "run" / "checkpoint.pt"
    good = path.read_bytes()
    data = torch.load(path, weights_only=True)

    path.write_bytes(os.urandom(4096))
    code, err = _resume(tmp_path / "run", capsys, "iterations=2")
    assert code == 2 and "corrupt" in err
    path.write_bytes(good[: len(good) // 2])  # truncated
    code, err = _resume(tmp_path / "run", capsys, "iterations=2")
    assert code == 2 and "corrupt" in err
    for change, message in [
        (lambda d: d.update(version=99), "version 99"),
        (lambda d: d.update(version=3), "feature version 1"),  # the trainer before feature version 2
        (lambda d: d.update(feature_version=7), "feature version 7"),
        (lambda d: d.pop("model"), "lacks model"),
        (lambda d: d.update(config="x"), "config is not a mapping"),
        (lambda d: d["config"].update(lr=float("inf")), "lr=inf"),
        (lambda d: d["rollout"]["bg"]["state"].update(hands=torch.zeros(3)), "field hands: expected uint64"),
        (lambda d: d["rollout"].update(learner_seat=torch.zeros(8, dtype=torch.int32)), "learner_seat"),
        (lambda d: d.update(np_rng="garbage"), "does not fit"),
        (lambda d: d.update(iteration="one"), "iteration 'one'"),
    ]:
        copy = {**data, "config": dict(data["config"]), "rollout": {**data["rollout"], "bg": {
            **data["rollout"]["bg"], "state": dict(data["rollout"]["bg"]["state"])}}}
        change(copy)
        torch.save(copy, path)
        code, err = _resume(tmp_path / "run", capsys, "iterations=2")
        assert code == 2 and message in err, (message, err)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "nowhere.pt")
