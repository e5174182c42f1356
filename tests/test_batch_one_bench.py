"""benchmarks/batch_one.py measures every loop it names, side by side with the reference engine."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def _script():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "batch_one.py"
    spec = importlib.util.spec_from_file_location("batch_one", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_loop_is_timed_against_the_reference():
    batch_one = _script()
    figures = batch_one.measure(rounds=2, decisions=60, preset="foster")
    assert list(figures) == list(batch_one.LOOPS)
    assert figures["reference"][1] == 1.0
    assert all(us > 0 and ratio > 0 for us, ratio in figures.values())


def test_bad_settings_are_refused_before_measuring(capsys):
    with pytest.raises(SystemExit):
        _script().main(["--rounds", "0"])
    assert "--rounds and --decisions must be at least 1, got 0" in capsys.readouterr().err
