"""Learning curves from a run's ``metrics.jsonl``: evaluation win rates (with 95 % intervals)
and training statistics against decisions collected.

``python -m train.plot RUN_DIR [RUN_DIR ...] [--out FILE]`` (several runs: overlaid, e.g. to
compare ``critic=plain`` and ``critic=perfect``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def read_metrics(run_dir: str | Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot_learning_curve(*run_dirs: str | Path, out: str | Path | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out) if out is not None else Path(run_dirs[0]) / "learning_curve.png"
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", ":", "-."]
    for ri, run in enumerate(run_dirs):
        color = colors[ri % len(colors)]
        rows = read_metrics(run)
        label = Path(run).name
        evals = [r for r in rows if any(k.startswith("eval/win_rate_") for k in r)]
        opps = sorted({k[len("eval/win_rate_"):] for r in evals for k in r if k.startswith("eval/win_rate_")})
        for o, opp in enumerate(opps):
            xs = [r["global_step"] / 1e6 for r in evals if r.get(f"eval/win_rate_{opp}") is not None]
            ys = [100 * r[f"eval/win_rate_{opp}"] for r in evals if r.get(f"eval/win_rate_{opp}") is not None]
            lo = [100 * (r.get(f"eval/ci_low_{opp}") or r[f"eval/win_rate_{opp}"]) for r in evals
                  if r.get(f"eval/win_rate_{opp}") is not None]
            hi = [100 * (r.get(f"eval/ci_high_{opp}") or r[f"eval/win_rate_{opp}"]) for r in evals
                  if r.get(f"eval/win_rate_{opp}") is not None]
            axes[0].plot(xs, ys, marker="o", ms=3, color=color, ls=styles[o % len(styles)], label=f"{label} vs {opp}")
            axes[0].fill_between(xs, lo, hi, color=color, alpha=0.12)
        xs = [r["global_step"] / 1e6 for r in rows]
        axes[1].plot(xs, [r.get("loss/entropy") for r in rows], color=color, label=label)
        axes[2].plot(xs, [r.get("loss/explained_variance") for r in rows], color=color, label=label)
    axes[0].axhline(50, color="grey", lw=0.8, ls="--")
    axes[0].set(xlabel="decisions (millions)", ylabel="game win % (duplicate deals, greedy)",
                title="evaluation", ylim=(0, 100))
    axes[1].set(xlabel="decisions (millions)", title="policy entropy")
    axes[2].set(xlabel="decisions (millions)", title="value: explained variance")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("--out", metavar="FILE")
    args = parser.parse_args(argv)
    print(plot_learning_curve(*args.runs, out=args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
