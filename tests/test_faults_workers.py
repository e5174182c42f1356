"""Worker pools under faults (issue 26): a killed worker is an error naming its work, never a hang;
SIGTERM to ``imperiale eval --workers 2`` keeps the finished matches as Ctrl-C does, without
tracebacks from the workers; every start method works."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from imperiale_agents.parallel.process_pool import WorkerError, WorkerPool, cpu_count, default_start_method

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("method", ["spawn", "fork", "forkserver"])
def test_a_pool_maps_in_order_with_every_start_method(method):
    with WorkerPool(2, "sums", start_method=method) as pool:
        assert pool.map(abs, range(-5, 5)) == [abs(x) for x in range(-5, 5)]


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_a_worker_that_dies_is_named_not_waited_on(method):
    pool = WorkerPool(2, "test searches", start_method=method)
    started = time.perf_counter()
    with pytest.raises(WorkerError, match=r"a worker process died while doing test searches \(3 tasks, 2 workers, "
                                          rf"start method {method}\)"):
        pool.map(os._exit, [3, 3, 3])
    assert time.perf_counter() - started < 30


def test_a_worker_killed_from_outside_mid_task():
    pool = WorkerPool(2, "long searches", start_method="fork")

    def kill_one():
        while not pool._executor._processes:
            time.sleep(0.01)
        time.sleep(0.3)
        os.kill(next(iter(pool._executor._processes)), signal.SIGKILL)

    threading.Thread(target=kill_one, daemon=True).start()
    with pytest.raises(WorkerError, match="long searches"):
        pool.map(time.sleep, [5, 5, 5, 5])


def test_bad_start_method_and_cpu_count():
    with pytest.raises(ValueError, match="allowed: forkserver, spawn, fork"):
        WorkerPool(1, "x", start_method="thread")
    assert cpu_count() >= 1 and default_start_method() in ("forkserver", "spawn")


def _grandchildren(pid: int) -> list[int]:
    """The pool's workers: children of the forkserver (the resource tracker and the forkserver are
    the command's own children, left alive)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    children = [p for p, parent in parents.items() if parent == pid]
    return [p for p, parent in parents.items() if parent in children]


def _start_eval(out: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "imperiale_cli", "eval", "--agents", "pimc:4,heuristic", "--deals", "3000",
           "--workers", "2", "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(6)  # past the start: pimc's workers are searching
    assert proc.poll() is None, proc.communicate()
    return proc


def test_sigterm_to_eval_with_workers_writes_the_finished_matches(tmp_path):
    proc = _start_eval(tmp_path / "out")
    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    result = json.loads((tmp_path / "out" / "results.json").read_text())
    assert result  # the matches finished before the signal, written as on Ctrl-C


def test_a_pimc_worker_killed_mid_eval_ends_in_one_line(tmp_path):
    proc = _start_eval(tmp_path / "out")
    workers = _grandchildren(proc.pid)
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "worker process died while doing pimc searches" in err, err
    assert "Traceback" not in err
