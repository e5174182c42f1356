"""``imperiale bench --solver`` and ``--peers`` run end to end (figures are not asserted: no timed tests)."""

from __future__ import annotations

import sys

import pytest

from imperiale_cli.cli import main
from imperiale_cli.devtools.bench_peers import THREAD_VARIABLES, PeersUnavailable, run_peers_bench
from imperiale_cli.devtools.bench_solver import run_solver_bench
from imperiale_env.core.observation import OBS_SIZE


def test_solver_bench_reports_each_depth_and_the_ratio():
    lines = list(run_solver_bench(0.02, "academie", compile_time=False))
    text = "\n".join(lines)
    for left in (12, 8, 4):
        assert f"{left} tricks left: compiled" in text
        assert f"pimc:16 decision at {left} tricks left" in text
    assert "x on the same" in text and "over whole deals" in text


def test_solver_bench_refuses_bad_seconds():
    with pytest.raises(ValueError, match="seconds"):
        list(run_solver_bench(0, "academie", compile_time=False))


@pytest.fixture
def restored_thread_variables(monkeypatch):
    """``bench --peers`` caps the numeric libraries at one thread: undo it after the test."""
    for name in THREAD_VARIABLES:
        monkeypatch.setenv(name, "1")


def test_peers_bench_names_the_extra_when_openspiel_is_missing(monkeypatch, capsys, restored_thread_variables):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel raises ImportError
    with pytest.raises(PeersUnavailable, match=r"imperiale\[bench\]"):
        list(run_peers_bench(8, 0.01))
    assert main(["bench", "--peers", "--seconds", "0.01"]) == 1
    assert "'bench' extra" in capsys.readouterr().err


def test_peers_bench_runs_with_openspiel(capsys, restored_thread_variables):
    # OpenSpiel comes with the dev extra (through 'bench'), so this runs for real in CI.
    assert main(["bench", "--peers", "--seconds", "0.05", "--batch-sizes", "8"]) == 0
    out = capsys.readouterr().out
    assert "OpenSpiel hearts:" in out and "OpenSpiel skat:" in out and "ratio to the faster peer" in out
    assert f"{OBS_SIZE} bytes an observation" in out and out.count("bytes an observation") == 3
