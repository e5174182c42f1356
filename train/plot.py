"""Learning curves from a run's ``metrics.jsonl``: evaluation win rates (with 95 % intervals)
and training statistics against the decisions played (millions).

Decisions, not wall minutes, are the x axis of a self-play run: they do not change with the
machine's load.  A run that begins with imitation rounds (:mod:`imperiale_train.imitate`), which
collect no PPO decisions but cost most of the run's time, is drawn against its training minutes
instead: the run's own measured work (labels, updates, rollouts), evaluations left out.

``python -m imperiale_train.plot RUN_DIR [RUN_DIR ...] [--out FILE]`` (several runs: overlaid, e.g. to
compare ``critic=plain`` and ``critic=perfect``).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def read_metrics(run_dir: str | Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def training_minutes(rows: list[dict]) -> list[float]:
    """Cumulative training minutes at each metrics row: an imitation round's search and update
    time, a PPO iteration's decisions over its measured rate (evaluation time excluded)."""
    out, seconds, step = [], 0.0, 0
    for row in rows:
        if "imitation_round" in row and row.get("iteration") == 0:
            seconds += (row.get("perf/label_s") or 0.0) + (row.get("perf/imitation_update_s") or 0.0)
        elif row.get("perf/steps_per_s"):
            seconds += (row["global_step"] - step) / row["perf/steps_per_s"]
        step = row.get("global_step", step)
        out.append(seconds / 60)
    return out


def x_axis(rows: list[dict], minutes: bool) -> tuple[list[float], str]:
    """The x of each metrics row and the axis' label: millions of decisions, or training minutes
    (``minutes``: when a run drawn has imitation rounds)."""
    if minutes:
        return training_minutes(rows), "training minutes"
    return [r.get("global_step", 0) / 1e6 for r in rows], "decisions (millions)"


def plot_learning_curve(*run_dirs: str | Path, out: str | Path | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out) if out is not None else Path(run_dirs[0]) / "learning_curve.png"
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    span = [50.0, 50.0]  # the win-rate axis: the data's range in tens, 50 % always in sight
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", ":", "-."]
    runs = [read_metrics(run) for run in run_dirs]
    imitated = any("imitation_round" in r for rows in runs for r in rows)
    for ri, (run, rows) in enumerate(zip(run_dirs, runs, strict=True)):
        color = colors[ri % len(colors)]
        minutes, xlabel = x_axis(rows, imitated)
        label = Path(run).name
        opps = sorted({k[len("eval/win_rate_"):] for r in rows for k in r if k.startswith("eval/win_rate_")})
        for o, opp in enumerate(opps):
            at = [i for i, r in enumerate(rows) if r.get(f"eval/win_rate_{opp}") is not None]
            win = [100 * rows[i][f"eval/win_rate_{opp}"] for i in at]
            lo = [100 * (rows[i].get(f"eval/ci_low_{opp}") or rows[i][f"eval/win_rate_{opp}"]) for i in at]
            hi = [100 * (rows[i].get(f"eval/ci_high_{opp}") or rows[i][f"eval/win_rate_{opp}"]) for i in at]
            xs = [minutes[i] for i in at]
            axes[0].plot(xs, win, marker="o", ms=3, color=color, ls=styles[o % len(styles)], label=f"{label} vs {opp}")
            axes[0].fill_between(xs, lo, hi, color=color, alpha=0.12)
            span = [min(span[0], *lo), max(span[1], *hi)]
        imitation = [minutes[i] for i, r in enumerate(rows) if "imitation_round" in r]
        if imitation and len(imitation) < len(rows):  # where PPO takes over from the imitation
            axes[0].axvline(imitation[-1], color=color, lw=0.8, ls=":", label=f"{label}: imitation ends")
        ppo = [i for i, r in enumerate(rows) if "imitation_round" not in r]
        axes[1].plot([minutes[i] for i in ppo], [rows[i].get("loss/entropy") for i in ppo], color=color, label=label)
        axes[2].plot([minutes[i] for i in ppo], [rows[i].get("loss/explained_variance") for i in ppo], color=color,
                     label=label)
    axes[0].axhline(50, color="grey", lw=0.8, ls="--")
    axes[0].set(xlabel=xlabel, ylabel="win % (duplicate evaluation, greedy)",
                title="evaluation", ylim=(10 * math.floor(span[0] / 10), 10 * math.ceil(span[1] / 10)))
    axes[1].set(xlabel=xlabel, title="policy entropy (PPO)")
    axes[2].set(xlabel=xlabel, title="value: explained variance (PPO)")
    axes[0].set_xlim(left=0)  # the whole run; the PPO panels keep to the PPO iterations
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    from imperiale_env.core.atomic import write_atomic

    write_atomic(out, lambda f: fig.savefig(f, dpi=110, format=out.suffix.lstrip(".") or "png"), what="plot")
    plt.close(fig)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m imperiale_train.plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("--out", metavar="FILE")
    args = parser.parse_args(argv)
    print(plot_learning_curve(*args.runs, out=args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
