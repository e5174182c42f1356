"""The profiling scripts of benchmarks/ run and report every part they name (tiny sizes)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_step_parts_times_every_part_and_bounds_the_speed_up(capsys):
    step_parts = _script("step_parts")
    parts = step_parts.measure(batch=16, threads=1, steps=400)
    assert set(parts) == set(step_parts.PARTS)
    assert parts["stages"] > 0 and parts["observe"] > 0 and parts["legal actions"] > 0
    assert parts["restarts"] > 0  # 400 decisions a slot: whole games end and restart
    assert step_parts.main(["--batch", "64", "--threads", "2", "--steps", "5"]) == 0
    out = capsys.readouterr().out
    assert "1 thread(s):" in out and "2 thread(s):" in out
    bound = float(out.rsplit("2 threads: ", 1)[1].split("x")[0])
    assert 1.0 <= bound <= 2.0  # Amdahl: never above the thread count


def test_observation_cost_reports_step_observe_and_fill(capsys):
    assert _script("observation_cost").main(["--batch", "64"]) == 0
    out = capsys.readouterr().out
    numbers = [float(x.split()[-1]) for x in out.strip().split("ns a game: ")[1].split(", ")]
    assert len(numbers) == 3 and all(n > 0 for n in numbers)


@pytest.mark.parametrize("name", ["step_parts", "observation_cost"])
def test_scripts_document_themselves(name):
    assert "python benchmarks/" + name + ".py" in _script(name).__doc__


def test_solver_check_runs_and_refuses_bad_arguments(capsys):
    script = _script("solver_check")
    assert script.main(["--seeds", "1", "--tricks-left", "3", "--rules", "foster"]) == 0
    assert "positions of" in capsys.readouterr().out
    for bad in (["--seeds", "0"], ["--tricks-left", "13"], ["--rules", "bridge"]):
        with pytest.raises(SystemExit):
            script.main(bad)
        assert "must be" in capsys.readouterr().err


def test_belief_fit_compares_both_tables_on_fresh_deals(tmp_path, capsys):
    pytest.importorskip("torch")
    assert _script("belief_fit").main(["--deals", "12", "--seed", "5", "--plot", str(tmp_path / "r.png")]) == 0
    out = capsys.readouterr().out
    assert "each card's softmax" in out and "fitted to the counts" in out and "bootstrap over deals" in out
    assert (tmp_path / "r.png").stat().st_size > 1000
