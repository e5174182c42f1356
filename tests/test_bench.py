"""The benchmark runs end to end and reports every engine (figures are not asserted: no timed tests)."""

from __future__ import annotations

import pytest

from imperiale_cli.cli import main
from imperiale_cli.devtools.bench_engine import run_bench


def test_bench_reports_each_engine_and_batch_size():
    lines = list(run_bench([1, 8], seconds=0.05, rules="academie3", compile_time=False))
    text = "\n".join(lines)
    assert "reference engine:" in text
    assert "batch 1:" in text and "batch 8:" in text
    assert "x reference" in text and "with observations" in text


@pytest.mark.parametrize("bad", [{"seconds": 0}, {"batch_sizes": [0]}, {"threads": 0}, {"threads": 10**6}])
def test_bench_refuses_bad_settings(bad):
    kwargs = {"batch_sizes": [1], "seconds": 0.05, **bad}
    with pytest.raises(ValueError):
        list(run_bench(**kwargs))


def test_bench_command(capsys):
    assert main(["bench", "--seconds", "0.05", "--batch-sizes", "2"]) == 0
    out = capsys.readouterr().out
    assert "batch 2:" in out
    assert "s compiling (empty cache)" in out and "s from the cache" in out


def test_bench_train_reports_the_trainer_split_and_the_engine(capsys):
    pytest.importorskip("torch")
    tiny = ["num_envs=16", "num_steps=8", "hidden=8", "threads=1"]
    assert main(["bench", "--train", "--iterations", "2", *tiny]) == 0
    out = capsys.readouterr().out
    assert "trainer, steady state:" in out and "decisions/s" in out and "load average before:" in out
    shares = [float(line.rsplit(None, 2)[-2]) for line in out.splitlines() if line.rstrip().endswith("%")
              and line.startswith("  ")]
    assert len(shares) == 5 and abs(sum(shares) - 100) < 0.5  # the parts add up to the iteration's wall time
    assert "engine alone" in out and "% of the trainer's time" in out


def test_bench_train_refuses_bad_overrides_before_any_work(capsys):
    assert main(["bench", "--train", "lr=-1"]) == 2
    assert "lr=-1" in capsys.readouterr().err
    assert main(["bench", "num_envs=8"]) == 2  # overrides without --train
    assert "go with --train" in capsys.readouterr().err
