"""``eval --ray HOST:PORT`` at a port where another service listens (issue 26): a named time limit
and a clear error instead of a wait without end."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from imperiale_agents.parallel import ray_cluster as cluster  # noqa: E402
from imperiale_agents.parallel.ray_cluster import ClusterError  # noqa: E402


def test_a_service_that_is_not_ray_is_given_up_within_the_limit(monkeypatch):
    server = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()  # accepts, never answers
    address = f"127.0.0.1:{server.getsockname()[1]}"
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 2.0)
    started = time.perf_counter()
    with pytest.raises(ClusterError, match=r"no Ray cluster answered at .* within 2 s \(CONNECT_SECONDS\): is it a "
                                           r"Ray head's port"):
        cluster.connect(address)
    assert time.perf_counter() - started < 15
    server.close()


def _ray_processes(title: bytes) -> list[int]:
    """The process ids whose title (what Ray names its processes, ``ray::RolloutWorker...``) starts with ``title``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(title):
                    pids.append(int(entry.name))
            except OSError:  # a process that ended while the folder was read
                pass
    return pids


def _train_argv(run_dir: Path, iterations: int, *extra: str) -> list[str]:
    """The real command line (``python -m imperiale_cli train``) with two Ray rollout workers."""
    return [sys.executable, "-m", "imperiale_cli", "train", f"iterations={iterations}", "num_envs=64",
            "rollout_workers=2", f"run_dir={run_dir}", "eval_groups=4", "progress=false", "tensorboard=false",
            "plot=false", *extra]


def _train(run_dir: Path, kill: bool) -> tuple[str, list[dict]]:
    """``imperiale train`` with two Ray rollout workers; with ``kill``, both workers are killed
    (SIGKILL) once they are collecting, while the run is still going."""
    child = subprocess.Popen(_train_argv(run_dir, 30), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed_at = None
    if kill:
        deadline = time.monotonic() + 120
        while not _ray_processes(b"ray::RolloutWorker") and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        metrics = run_dir / "metrics.jsonl"
        killed_at = len(metrics.read_text().splitlines()) if metrics.exists() else 0
        for pid in _ray_processes(b"ray::RolloutWorker"):
            os.kill(pid, signal.SIGKILL)
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 0, out
    if kill:
        assert killed_at is not None and killed_at < 30, "the kill landed after the run had ended"
    return out, [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_a_killed_rollout_worker_is_restarted_and_the_run_is_unchanged(tmp_path):
    """Losing Ray rollout workers mid-run (issue 41): Ray restarts the actors and retries their
    collection (each worker's games travel with the call), and the run ends as the same run
    without the loss, loss for loss."""
    out, killed = _train(tmp_path / "killed", kill=True)
    assert "will be retried" in out or "died" in out, out  # Ray saw the workers go
    _, whole = _train(tmp_path / "whole", kill=False)
    assert len(killed) == len(whole) == 30
    for a, b in zip(killed, whole, strict=True):
        assert {k: v for k, v in a.items() if k.startswith("loss/")} == \
            {k: v for k, v in b.items() if k.startswith("loss/")}


def _start_training(run_dir: Path, *extra: str, sigint_ignored: bool = False) -> subprocess.Popen:
    """The real command line (``python -m imperiale_cli``), which watches a Ray run from outside;
    ``sigint_ignored``: started as a shell starts a background job, SIGINT ignored."""
    argv = _train_argv(run_dir, 200, "checkpoint_every=1", *extra)
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=ignore)
    deadline = time.monotonic() + 120
    while not (run_dir / "checkpoint.pt").exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert child.poll() is None, child.communicate()[0]
    return child


def test_a_ray_node_dying_under_training_ends_in_one_line_and_the_run_resumes(tmp_path):
    """Ray's core ends the driver without a Python exception when its node dies (here: its agents
    killed, which takes the raylet down); the command says so in one line with the resume command,
    and the resume finishes the run (issue 41)."""
    run_dir = tmp_path / "run"
    child = _start_training(run_dir)
    for title in (b"ray::DashboardAgent", b"ray::RuntimeEnvAgent"):
        for pid in _ray_processes(title):
            os.kill(pid, signal.SIGKILL)
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 1, out
    last = out.strip().splitlines()[-1]
    assert last.startswith("imperiale train: error: the training process ended with status 1 without a word of "
                           "its own") and f"resume with: imperiale train --resume run_dir={run_dir}" in last, out
    # a slow machine trains a few iterations before the node's death reaches the driver: resume to two past them
    trained = len((run_dir / "metrics.jsonl").read_text().splitlines())
    done = subprocess.run([sys.executable, "-m", "imperiale_cli", "train", "--resume", f"run_dir={run_dir}",
                           f"iterations={trained + 2}", "progress=false"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "trained" in done.stdout, done.stdout + done.stderr


def test_sigterm_to_a_watched_ray_run_reaches_the_training(tmp_path):
    """The watching process passes SIGTERM on: the run checkpoints its last iteration and says how
    to resume, as a run without Ray does; also when it was started in the background by a shell,
    with SIGINT ignored (the CI's run of this test once ended the run's 200 iterations instead)."""
    run_dir = tmp_path / "run"
    child = _start_training(run_dir, sigint_ignored=True)
    child.send_signal(signal.SIGTERM)
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 130, out
    assert "interrupted; iteration" in out and f"resume with: imperiale train --resume run_dir={run_dir}" in out, out
