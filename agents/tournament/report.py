"""A tournament's results for people: the Markdown page, the matrix picture and the result files.

:func:`markdown` is what ``imperiale eval`` prints; :func:`write_outputs` writes ``results.json``,
``results.md`` and, when matplotlib is importable, ``matrix.png`` into a folder that
:func:`check_outputs` approved before the tournament started (an earlier tournament's files are never
overwritten).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from imperiale_agents.tournament.stats import RATING_RESAMPLES, AgentTiming
from imperiale_env.core.input_checks import InputError, output_dir

if TYPE_CHECKING:
    from imperiale_agents.tournament.match import TournamentResult


def markdown(result: TournamentResult) -> str:
    """The tournament's results as a Markdown page: the pairings, the ratings, how to read them."""
    mode = "single deals" if result.single_deal else f"whole games to {result.rules.target_imperiales} impériales"
    why = "an agent failed" if result.stopped_by else "interrupted"
    lines = [
        f"# Tournament: {', '.join(result.names)}" + (f" (PARTIAL: {why})" if result.partial else ""),
        "",
        *([f"**Partial results.** {result.partial_note()}", ""] if result.partial else []),
        f"Rules `{result.rules.preset}` ({mode}), seed {result.seed}, {result.groups} duplicate seed groups per "
        f"lineup ({result.rules.players} games each, seats rotated), {result.seconds:.1f} s.",
        "",
    ]
    if result.single_deal:  # a game is one deal: the game columns would repeat the deal columns
        lines += ["| A | B | deals | A deal win % | 95% CI (paired) | 95% CI (Wilson) | A margin imp./deal "
                  "| 95% CI |",
                  "|---|---|---:|---:|---|---|---:|---|"]
    else:
        lines += ["| A | B | games | A game win % | 95% CI (paired) | 95% CI (Wilson) | deals | A deal win % "
                  "| 95% CI (paired) | A margin imp./deal | 95% CI |",
                  "|---|---|---:|---:|---|---|---:|---:|---|---:|---|"]

    def pct(x):
        return f"{100 * x:.1f}"

    def ci(t, f=pct):
        return f"[{f(t[0])}, {f(t[1])}]"

    def num(x):
        return f"{x:+.3f}"

    three = result.rules.players == 3
    if three:  # which lineup (agents at the three seats) each row comes from
        lines[-2] = "| lineup " + lines[-2]
        lines[-1] = "|---" + lines[-1]
    for p in result.pairs:
        lineup = f"| {' '.join(result.names[i] for i in p.extra['lineup'])} " if three else ""
        if result.single_deal:
            cells = f"{p.deals} | {pct(p.deal_rate)} | {ci(p.deal_ci_paired)} | {ci(p.game_ci_wilson)}"
        else:
            cells = (f"{p.games} | {pct(p.game_rate)} | {ci(p.game_ci_paired)} | {ci(p.game_ci_wilson)} "
                     f"| {p.deals} | {pct(p.deal_rate)} | {ci(p.deal_ci_paired)}")
        lines.append(f"{lineup}| {result.names[p.a]} | {result.names[p.b]} | {cells} "
                     f"| {num(p.margin_per_deal)} | {ci(p.margin_ci, num)} |")
    lines += ["", "| agent | Elo (Bradley-Terry) | 95% CI | ms / decision | decisions |",
              "|---|---:|---|---:|---:|"]
    for i in np.argsort(-result.elo, kind="stable"):
        t = result.timings.get(int(i), AgentTiming())
        lo, hi = result.elo_ci[i]
        lines.append(f"| {result.names[i]} | {result.elo[i]:.0f} | [{lo:.0f}, {hi:.0f}] | {t.ms_per_decision:.3f} "
                     f"| {t.decisions} |")
    lines += [
        "",
        "Win % are A's (undecided games count half; a tied deal is split among the tied seats).  "
        "Paired intervals treat each seed group "
        "(the same deals with the seats rotated) as one unit.  Elo: 400 log10 of Bradley-Terry strengths "
        f"fitted on all games, {result.names[0]} = 0; its 95% CI is the bootstrap over seed groups "
        f"({RATING_RESAMPLES} resamples), relative to {result.names[0]}.  Decision time is amortised over the "
        "batch of games the agent is asked about at once.",
        "",
    ]
    return "\n".join(lines)


def plot_matrix(result: TournamentResult, path: Path | io.BytesIO) -> bool:
    """The results matrix as a PNG (matplotlib, Agg) in ``path`` (a file name or a buffer);
    False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    mat = result.win_matrix()
    m = len(result.names)
    fig, ax = plt.subplots(figsize=(max(5.5, 2.0 + 1.2 * m), max(4.0, 1.4 + 1.0 * m)))
    im = ax.imshow(np.ma.masked_invalid(mat), vmin=0, vmax=1, cmap="RdBu")
    ax.set_xticks(range(m), result.names, rotation=30, ha="right")
    ax.set_yticks(range(m), result.names)
    for i in range(m):
        for j in range(m):
            if not np.isnan(mat[i, j]):
                ax.text(j, i, f"{100 * mat[i, j]:.0f}%", ha="center", va="center",
                        color="white" if abs(mat[i, j] - 0.5) > 0.3 else "black")
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent (row's game win rate)")
    mode = "single deals" if result.single_deal else "whole games"
    ax.set_title(f"{result.rules.preset}, {mode}, {result.groups} duplicate groups", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)
    return True


OUTPUT_NAMES = {"json": "results.json", "markdown": "results.md", "png": "matrix.png"}


def check_outputs(out: str | Path) -> Path:
    """Check the ``--out`` folder before a tournament: a folder that can be written or made,
    holding none of the result files (an earlier tournament's results are never overwritten).
    Raises :class:`~imperiale_env.core.input_checks.InputError`."""
    out = output_dir(out, "--out folder")
    found = [name for name in OUTPUT_NAMES.values() if os.path.lexists(out / name)]
    if found:
        raise InputError(f"the --out folder {str(out)!r} already holds {', '.join(found)} (an earlier tournament's "
                         "results?); they are not overwritten: choose another --out folder, or move them away")
    return out


def write_outputs(result: TournamentResult, out: str | Path) -> dict[str, Path]:
    """``results.json``, ``results.md`` and (with matplotlib) ``matrix.png`` in ``out``.

    Nothing is overwritten: :func:`check_outputs` refuses a folder that holds them before the
    tournament, and a file that appears meanwhile keeps its content while these results go
    to a new name (``results-2.json``, ...), which the returned paths give.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": _write_new(out / OUTPUT_NAMES["json"],
                           (json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n").encode("utf-8")),
        "markdown": _write_new(out / OUTPUT_NAMES["markdown"], markdown(result).encode("utf-8")),
    }
    png = io.BytesIO()
    if plot_matrix(result, png):
        paths["png"] = _write_new(out / OUTPUT_NAMES["png"], png.getvalue())
    return paths


def _write_new(path: Path, data: bytes) -> Path:
    """Write ``data`` atomically to ``path``, or to ``stem-2.suffix``, ``stem-3.suffix``, ... if it exists."""
    from imperiale_env.core.atomic import write_atomic

    target, n = path, 1
    while True:
        try:
            return write_atomic(target, data, overwrite=False, what="tournament result")
        except FileExistsError:
            n += 1
            target = path.with_name(f"{path.stem}-{n}{path.suffix}")
