"""``imperiale train`` checks everything before it starts, stops cleanly, resumes from its checkpoint
and says where its outputs are."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import TINY_TRAIN as TINY
from helpers import train_args as args

torch = pytest.importorskip("torch")

import imperiale_train.run as run_module  # noqa: E402
from imperiale_cli.cli import main  # noqa: E402
from imperiale_train.checkpoint import load_checkpoint  # noqa: E402
from imperiale_train.config import ConfigError, TrainConfig, allowed_keys, check_memory, make_config  # noqa: E402
from imperiale_train.run import TrainingInterrupted, train  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(["train", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def params(path):
    return load_checkpoint(path)["model"]


def same_params(a, b) -> bool:
    a, b = params(a), params(b)
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# ---------------------------------------------------------------- validation before any work


def test_config_files_that_are_not_yaml_text(tmp_path, capsys):
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(bytes(range(256)))
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("lr: 0.001  # réglé\n".encode("latin-1"))
    nul = tmp_path / "nul.yaml"
    nul.write_bytes(b"lr: 0.001\x00\n")
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for path, message in [(binary, "not UTF-8"), (latin, "not UTF-8"), (nul, "binary file"), (deep, "nests too deeply"),
                          (tmp_path, "is a directory"), (tmp_path / "missing.yaml", "no such config file")]:
        code, out, err = cli(capsys, "--config", str(path), f"run_dir={tmp_path / 'run'}")
        assert code == 2 and message in err and str(path) in err, err
        assert "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_run_dir_empty_or_a_file_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("mine")
    code, out, err = cli(capsys, "run_dir=", *args())
    assert code == 2 and "run_dir" in err and "not empty" in err
    code, out, err = cli(capsys, *args(run_dir="afile"))
    assert code == 2 and "'afile'" in err and "is a file" in err
    code, out, err = cli(capsys, *args(run_dir="afile/sub"))
    assert code == 2 and "is a file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"] and (tmp_path / "afile").read_text() == "mine"


@pytest.mark.parametrize("item, message", [
    ("seed=-1", "seed=-1"), (f"seed={2**63}", "2**63"), ("eval_seed=-5", "eval_seed"),
    ("lr=inf", "lr=inf"), ("ent_coef=inf", "ent_coef=inf"), ("gamma=nan", "gamma=nan"),
    ("vf_coef=-nan", "vf_coef"), ("max_grad_norm=1e400", "max_grad_norm=inf"), ("iterations=inf", "an int"),
])
def test_bad_numbers_are_refused_naming_the_key(tmp_path, capsys, item, message):
    code, out, err = cli(capsys, f"run_dir={tmp_path / 'run'}", item)
    assert code == 2 and message in err, err
    assert not (tmp_path / "run").exists()


def test_every_numeric_key_has_a_range():
    ranged = [f for f in dataclasses.fields(TrainConfig) if f.metadata["range"][0] is not None]
    numeric = [f.name for f in dataclasses.fields(TrainConfig) if f.type in ("int", "float", "tuple[int, ...]")]
    assert sorted(f.name for f in ranged) == sorted(numeric)
    for f in ranged:
        low, high, _ = f.metadata["range"]
        for bad in (low - 1, high + 1):
            value = ",".join([str(bad)] * 2) if f.type.startswith("tuple") else bad
            with pytest.raises(ConfigError, match=rf"{f.name}=.*(allowed: .* in [\[(]|must be in \[)"):
                make_config(None, {f.name: value})


def test_sizes_that_cannot_fit_are_refused_before_allocating(tmp_path, capsys):
    started = time.perf_counter()
    for item in ("num_envs=100000000", "num_steps=1000000"):
        code, out, err = cli(capsys, f"run_dir={tmp_path / 'run'}", item)
        assert code == 2 and "needs about" in err and "GiB" in err and "available" in err, err
    code, out, err = cli(capsys, f"run_dir={tmp_path / 'run'}", "hidden=100000,100000")  # bounded as policy files are
    assert code == 2 and "at most 67,108,864 weights" in err and "10,088,100,043" in err, err
    assert time.perf_counter() - started < 30  # nothing of that size was allocated
    assert not (tmp_path / "run").exists()
    check_memory(make_config(None), available=2**30)  # the default run fits in 1 GiB
    with pytest.raises(ConfigError, match="needs about"):
        check_memory(make_config(None, ["num_envs=65536"]), available=2**30)


def test_eval_opponents_are_built_before_training(tmp_path, capsys):
    for spec, message in [("pimc:abc", "pimc:N"), (f"neural:{tmp_path / 'missing.pt'}", "missing.pt"),
                          ("heuristic,neural:", "neural:PATH")]:
        code, out, err = cli(capsys, *args(run_dir=tmp_path / "run", eval_opponents=spec, iterations=50))
        assert code == 2 and "eval_opponents" in err and message in err, err
        assert not (tmp_path / "run").exists()  # refused before the first iteration


# ---------------------------------------------------------------- at runtime


def _failing_update(monkeypatch, on_call: int, fail):
    """Make the ``on_call``-th PPO update call ``fail(model, stats)`` (after the real update)."""
    real, calls = run_module.ppo_update, []

    def update(model, optimizer, batch, cfg, rng):
        stats = real(model, optimizer, batch, cfg, rng)
        calls.append(1)
        if len(calls) == on_call:
            fail(model, stats)
        return stats

    monkeypatch.setattr(run_module, "ppo_update", update)


def test_a_non_finite_loss_stops_and_keeps_the_last_good_checkpoint(tmp_path, capsys, monkeypatch):
    def blow_up(model, stats):
        stats["loss/value"] = float("nan")
        with torch.no_grad():
            next(model.parameters()).fill_(float("nan"))

    _failing_update(monkeypatch, 3, blow_up)
    code, out, err = cli(capsys, *args(run_dir=tmp_path / "run", iterations=10, checkpoint_every=0))
    assert code == 1 and "iteration 3: not finite: loss/value=nan, weights" in err
    assert "last good checkpoint, iteration 2" in err
    data = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert data["iteration"] == 2 and all(bool(torch.isfinite(v).all()) for v in data["model"].values())
    assert (tmp_path / "run" / "metrics.jsonl").read_text().count("\n") == 2


def test_the_final_checkpoint_is_written_before_the_final_evaluation(tmp_path, monkeypatch):
    seen = []

    def evaluate(*a, **kw):
        seen.append(load_checkpoint(tmp_path / "run" / "checkpoint.pt")["iteration"])
        raise RuntimeError("evaluation failed")

    monkeypatch.setattr(run_module, "evaluate", evaluate)
    with pytest.raises(RuntimeError, match="evaluation failed"):
        train(make_config(None, {**TINY, "run_dir": str(tmp_path / "run"), "iterations": 3, "checkpoint_every": 0}))
    assert seen == [3]


def test_ctrl_c_checkpoints_the_last_complete_iteration_and_resume_matches(tmp_path, monkeypatch):
    def interrupt(model, stats):
        raise KeyboardInterrupt

    cfg = make_config(None, {**TINY, "run_dir": str(tmp_path / "run"), "iterations": 6, "checkpoint_every": 0})
    _failing_update(monkeypatch, 4, interrupt)
    with pytest.raises(TrainingInterrupted) as caught:
        train(cfg)
    assert caught.value.iteration == 3 and caught.value.checkpoint == tmp_path / "run" / "checkpoint.pt"
    assert load_checkpoint(caught.value.checkpoint)["iteration"] == 3
    monkeypatch.undo()
    train(cfg, resume=True)
    train(dataclasses.replace(cfg, run_dir=str(tmp_path / "straight")))
    assert same_params(tmp_path / "run" / "checkpoint.pt", tmp_path / "straight" / "checkpoint.pt")


def test_a_real_sigint_stops_cleanly_with_exit_130(tmp_path):
    overrides = {"iterations": 40, "checkpoint_every": 0}
    cmd = [sys.executable, "-m", "imperiale_cli", "train", *args(run_dir=tmp_path / "run", **overrides)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    metrics = tmp_path / "run" / "metrics.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if metrics.exists() and metrics.read_text().count("\n") >= 2:
            break
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"imperiale train --resume run_dir={tmp_path / 'run'}" in err and "Traceback" not in err
    done = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["iteration"]
    # The signal may land between an iteration's metrics line and its in-memory snapshot: the
    # iteration before it is then the last complete one, and the one saved.
    assert 1 <= done < 40 and f"iteration {done} is saved" in err
    assert main(["train", "--resume", f"run_dir={tmp_path / 'run'}"]) == 0
    train(make_config(None, {**TINY, **overrides, "run_dir": str(tmp_path / "straight")}))
    assert same_params(tmp_path / "run" / "checkpoint.pt", tmp_path / "straight" / "checkpoint.pt")
    lines = [json.loads(x)["iteration"] for x in metrics.read_text().splitlines()]
    assert lines == list(range(1, 41))


# ---------------------------------------------------------------- resume


def test_a_copied_run_resumes_with_the_checkpoints_configuration(tmp_path, capsys):
    cfg = make_config(None, {**TINY, "run_dir": str(tmp_path / "run"), "iterations": 4, "checkpoint_every": 1})
    train(cfg, stop_after=2)
    shutil.copytree(tmp_path / "run", tmp_path / "copy")
    shutil.rmtree(tmp_path / "run")
    code, out, err = cli(capsys, "--resume", f"run_dir={tmp_path / 'copy'}")  # no other key repeated
    assert code == 0, err
    train(dataclasses.replace(cfg, run_dir=str(tmp_path / "straight")))
    assert same_params(tmp_path / "copy" / "checkpoint.pt", tmp_path / "straight" / "checkpoint.pt")


def test_resume_refuses_changes_and_says_when_there_is_nothing_to_do(tmp_path, capsys):
    run = f"run_dir={tmp_path / 'run'}"
    code, out, err = cli(capsys, "--resume", run)
    assert code == 2 and "nothing to resume: no checkpoint" in err
    train(make_config(None, {**TINY, "run_dir": str(tmp_path / "run"), "iterations": 2}))
    code, out, err = cli(capsys, "--resume", run)
    assert code == 2 and "has finished (2 of iterations=2 done)" in err and "iterations=N with N > 2" in err
    code, out, err = cli(capsys, "--resume", run, "iterations=1")
    assert code == 2 and "went further" in err
    code, out, err = cli(capsys, "--resume", run, "iterations=4", "lr=0.5", "critic=perfect")
    assert code == 2 and "lr=0.5 (checkpoint: 0.001)" in err and "critic='perfect'" in err
    code, out, err = cli(capsys, "--resume", run, "iteration=999")
    assert code == 2 and "unknown config key" in err and "'iteration'" in err
    code, out, err = cli(capsys, "--resume", run, "iterations=3", "eval_every=1", "progress=false", "threads=1")
    assert code == 0 and "trained iterations 3-3 (resumed at 2), 192 decisions in all" in out, err
    assert load_checkpoint(tmp_path / "run" / "checkpoint.pt")["iteration"] == 3
    code, out, err = cli(capsys, "--resume", run, "run_dir=")
    assert code == 2 and "run_dir" in err


def test_resume_drops_a_metrics_line_cut_short_and_refuses_a_damaged_one(tmp_path, capsys):
    cfg = make_config(None, {**TINY, "run_dir": str(tmp_path / "run"), "iterations": 4, "checkpoint_every": 1})
    train(cfg, stop_after=2)
    metrics = tmp_path / "run" / "metrics.jsonl"
    with metrics.open("a") as f:
        f.write('{"iteration": 3, "global_st')  # the kill came mid-line
    assert cli(capsys, "--resume", f"run_dir={tmp_path / 'run'}")[0] == 0
    assert [json.loads(x)["iteration"] for x in metrics.read_text().splitlines()] == [1, 2, 3, 4]
    train(dataclasses.replace(cfg, run_dir=str(tmp_path / "other")), stop_after=2)
    lines = (tmp_path / "other" / "metrics.jsonl").read_text().splitlines()
    (tmp_path / "other" / "metrics.jsonl").write_text("\n".join(["garbage", *lines]) + "\n")
    code, out, err = cli(capsys, "--resume", f"run_dir={tmp_path / 'other'}")
    assert code == 2 and "line 1 is damaged" in err


# ---------------------------------------------------------------- what the command says


def test_train_ends_with_its_outputs_and_the_next_commands(tmp_path, capsys):
    code, out, err = cli(capsys, *args(run_dir=tmp_path / "run", iterations=2, plot=True, tensorboard=True))
    assert code == 0, err
    run = tmp_path / "run"
    for line in [f"checkpoint  {run / 'checkpoint.pt'}", f"metrics     {run / 'metrics.jsonl'}",
                 f"tensorboard {run / 'tb'}", f"plot        {run / 'learning_curve.png'}",
                 f"imperiale play --opponent neural:{run / 'checkpoint.pt'}",
                 f"imperiale eval --agents neural:{run / 'checkpoint.pt'},heuristic",
                 f"tensorboard --logdir {run / 'tb'}", f"imperiale train --resume run_dir={run} iterations=4",
                 "trained 2 iterations, 128 decisions in all", "win rate vs random"]:
        assert line in out, (line, out)
    assert (run / "learning_curve.png").is_file() and (run / "tb").is_dir()


def test_train_help_lists_every_key_with_its_default(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    for f in dataclasses.fields(TrainConfig):
        default = ",".join(map(str, f.default)) if isinstance(f.default, tuple) else \
            str(f.default).lower() if isinstance(f.default, bool) else str(f.default)
        assert f"  {f.name}={default}\n      {f.metadata['meaning']}" in text, f.name
    assert len(allowed_keys()) == len(dataclasses.fields(TrainConfig))
    assert "lr=0.001\n      Adam learning rate (a finite float in (0, 1])" in text


def test_a_run_starts_by_saying_what_it_will_do(tmp_path, capsys):
    code, out, err = cli(capsys, *args(run_dir=tmp_path / "run", iterations=2, progress="true"))
    assert code == 0, err
    banner = err.splitlines()[0]
    assert banner.startswith(f"training academie self-play PPO in {tmp_path / 'run'}: iterations 1 to 2 of ") \
        and "decisions), device cpu, 1 thread, seed 0; evaluation against random" in banner, banner
    # the bar counts decisions, with the rate, and says which iteration it is on
    assert re.search(r"train: 100%\|.*\| [\d.]+k?/[\d.]+k? \[.*decisions/s.*iteration=2/2", err), err
