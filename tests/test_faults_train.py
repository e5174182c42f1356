"""``imperiale train`` under faults (issue 26): SIGTERM and SIGHUP keep the iterations done as Ctrl-C
does, one process at a time trains in a run directory, a full disk at a checkpoint and a lost Ray
cluster end in one line that says what is kept and how to resume."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import TINY_TRAIN as TINY
from helpers import train_args as _args

torch = pytest.importorskip("torch")

import imperiale_train.run as run_module  # noqa: E402
from imperiale_agents.parallel.ray_cluster import ClusterError  # noqa: E402
from imperiale_cli.cli import main  # noqa: E402
from imperiale_train.checkpoint import load_checkpoint  # noqa: E402
from imperiale_train.config import ConfigError, make_config  # noqa: E402
from imperiale_train.run import train  # noqa: E402
from imperiale_train.run_lock import LOCK_NAME  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _start(run_dir: Path) -> subprocess.Popen:
    """A training in a child process (a checkpoint every 3 iterations), returned once its first
    checkpoint is written."""
    cmd = [sys.executable, "-m", "imperiale_cli", "train", *_args(run_dir=run_dir, iterations=400, checkpoint_every=3)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    metrics, deadline = run_dir / "metrics.jsonl", time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if metrics.exists() and metrics.read_text().count("\n") >= 4:
            return proc
        time.sleep(0.02)
    raise AssertionError(proc.communicate())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_checkpoint_like_ctrl_c(tmp_path, capsys, sig):
    run_dir = tmp_path / "run"
    proc = _start(run_dir)
    assert (run_dir / LOCK_NAME).read_text().split()[0] == str(proc.pid)  # the pid, then its start time
    for second in (["train", *_args(run_dir=run_dir, iterations=400)], ["train", "--resume", f"run_dir={run_dir}"]):
        assert main(second) == 2  # the live run is not written into by a second process
        err = capsys.readouterr().err
        assert f"being trained by process {proc.pid}" in err and err.count("\n") == 1, err
    os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    done = load_checkpoint(run_dir / "checkpoint.pt")["iteration"]
    lines = (run_dir / "metrics.jsonl").read_text().count("\n")
    # Saved at the signal, not at the last periodic checkpoint: the signal may land between an
    # iteration's metrics line and its snapshot, so the iteration before the last line is enough.
    assert done >= max(4, lines - 1) and f"iteration {done} is saved" in err
    assert f"imperiale train --resume run_dir={run_dir}" in err
    assert not (run_dir / LOCK_NAME).exists()


def test_a_dead_process_lock_is_taken_over(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / LOCK_NAME).write_text(f"{dead.pid}\n")
    result = train(make_config(None, {**TINY, "run_dir": str(tmp_path / "run"), "iterations": 1}))
    assert result["iteration"] == 1 and not (tmp_path / "run" / LOCK_NAME).exists()


def test_full_disk_at_a_checkpoint_keeps_the_last_good_one(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    assert main(["train", *_args(run_dir=run_dir, iterations=2, checkpoint_every=1)]) == 0
    capsys.readouterr()
    real_fsync = os.fsync

    def fsync(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp") and ".checkpoint.pt." in os.readlink(
                f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert main(["train", "--resume", f"run_dir={run_dir}", "iterations=4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and "earlier file is kept" in err, err
    assert load_checkpoint(run_dir / "checkpoint.pt")["iteration"] == 2
    assert [p.name for p in run_dir.iterdir() if p.name.endswith(".tmp")] == []


def test_a_lock_naming_a_reused_pid_is_taken_over_and_a_live_one_refused(tmp_path):
    """The pid of a dead run's lock may belong to another process by now: its start time tells."""
    from imperiale_train.run_lock import _started

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        (run_dir / LOCK_NAME).write_text(f"{other.pid} 1\n")  # that pid, started at another time
        result = train(make_config(None, {**TINY, "run_dir": str(run_dir), "iterations": 1}))
        assert result["iteration"] == 1 and not (run_dir / LOCK_NAME).exists()
        (run_dir / LOCK_NAME).write_text(f"{other.pid} {_started(other.pid)}\n")  # really that process's
        with pytest.raises(ConfigError, match=f"being trained by process {other.pid}"):
            train(make_config(None, {**TINY, "run_dir": str(run_dir), "iterations": 2}), resume=True)
    finally:
        other.kill()
        other.wait()


def test_a_full_disk_under_the_metrics_ends_in_one_line_with_the_resume_command(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    assert main(["train", *_args(run_dir=run_dir, iterations=2, checkpoint_every=1)]) == 0
    capsys.readouterr()
    lines_before = (run_dir / "metrics.jsonl").read_text().splitlines()
    real_write = os.write

    def write(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("metrics.jsonl"):
            real_write(fd, bytes(data)[:7])  # part of the line reaches the disk, then it is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    assert main(["train", "--resume", f"run_dir={run_dir}", "iterations=4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot append to the metrics file" in err and "No space left" in err, err
    assert "nothing was appended" in err and f"imperiale train --resume run_dir={run_dir}" in err, err
    assert (run_dir / "metrics.jsonl").read_text().splitlines() == lines_before  # no half line
    assert not (run_dir / "train.lock").exists()
    monkeypatch.setattr(os, "write", real_write)
    assert main(["train", "--resume", f"run_dir={run_dir}", "iterations=4"]) == 0  # resumes once there is room
    assert [json.loads(x)["iteration"] for x in (run_dir / "metrics.jsonl").read_text().splitlines()] == [1, 2, 3, 4]


def test_a_lock_that_cannot_be_removed_is_left_with_a_warning(tmp_path, monkeypatch, capsys):
    """A file system turned read-only at the end of a run: the run's results stand, the lock is
    stale (its process is gone), and the next run takes it over."""
    real_unlink = Path.unlink

    def unlink(self, missing_ok=False):
        if self.name == "train.lock":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    run_dir = tmp_path / "run"
    with pytest.warns(UserWarning, match="could not remove the lock .*train.lock .*Read-only file system"):
        assert main(["train", *_args(run_dir=run_dir, iterations=1)]) == 0
    assert (run_dir / "train.lock").exists()
    monkeypatch.setattr(Path, "unlink", real_unlink)
    assert main(["train", "--resume", f"run_dir={run_dir}", "iterations=2"]) == 0


def test_a_lost_cluster_ends_with_the_resume_command(tmp_path, monkeypatch):
    real_collect, calls = run_module.SelfPlayRollout.collect, []

    def collect(self, *a):
        calls.append(1)
        if len(calls) == 3:
            raise ClusterError("the Ray cluster was lost (a worker died)")
        return real_collect(self, *a)

    monkeypatch.setattr(run_module.SelfPlayRollout, "collect", collect)
    run_dir = tmp_path / "run"
    with pytest.raises(ClusterError, match=r"cluster was lost.*iteration 2 is saved in .*resume with: imperiale "
                                           r"train --resume run_dir="):
        train(make_config(None, {**TINY, "run_dir": str(run_dir), "iterations": 5, "checkpoint_every": 0}))
    assert load_checkpoint(run_dir / "checkpoint.pt")["iteration"] == 2
