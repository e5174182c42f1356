"""The ``imperiale`` command line.

Subcommands:

- ``replay FILE``: tell a game record (``.json`` or ``.jsonl``, see docs/records.md) trick by
  trick, or print its score events as JSON (``--json``);
- ``bench``: throughput of every engine;
- ``train``, ``eval``, ``play``: self-play training, agent tournaments and interactive play;
- ``export``: the policy of a training checkpoint as a small file to ship or share (the form of
  the champions in ``agents/champions/``).

Every option is checked before any work starts (a range is named in the error), and every
command ends in its result or in one line on stderr: exit status 2 for an input that cannot be
used, 130 for Ctrl-C, 141 when the reader of the output goes away (``| head``).

Each subcommand's implementation is imported only when it runs, so that ``imperiale --version``
and ``--help`` never depend on the engine or torch (``train --help`` lists the configuration
keys from :mod:`imperiale_train.config`, which imports neither).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PROG = "imperiale"
DEFAULT_RULES = "academie"
DEFAULT_BATCH_SIZES = (1, 64, 1024, 4096)

Handler = Callable[[argparse.Namespace], int]


def package_version() -> str:
    """The installed version of the ``imperiale`` distribution (a placeholder if not installed)."""
    try:
        return version("imperiale")
    except PackageNotFoundError:
        return "0.0.0+local"


def _error(command: str, message: str) -> None:
    print(f"{PROG} {command}: error: {message}", file=sys.stderr)


USER_ERRORS = (
    ("imperiale_env.core.input_checks", "InputError"),
    ("imperiale_env.records.game_records", "RecordError"),
    ("imperiale_env.core.rules", "RulesError"),
    ("imperiale_cli.play", "PlayError"),
    ("imperiale_agents.base", "AgentError"),
    ("imperiale_train.config", "ConfigError"),
    ("imperiale_train.checkpoint", "CheckpointError"),
    ("imperiale_agents.parallel.ray_cluster", "ClusterError"),
    ("imperiale_env.core.atomic", "WriteError"),
    ("imperiale_agents.parallel.process_pool", "WorkerError"),
)
"""The exceptions that mean "this input cannot be used" (each message says why and what is
allowed): :func:`main` reports them as ``imperiale CMD: error: ...`` with exit status 2, so
that no handler repeats the same ``try``.  Named rather than imported, so that ``--help``
imports nothing: an exception of a class whose module was never imported cannot occur."""


def _is_user_error(exc: BaseException) -> bool:
    for module, name in USER_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(exc, cls):
            return True
    return False


MAX_BATCH_SIZE = 65536
"""Largest ``bench --batch-sizes`` entry: about 5.5 KB of engine state a game, so 360 MB."""
MIN_BENCH_SECONDS = 0.01
MAX_BENCH_SECONDS = 600.0
MAX_GROUPS = 100_000
"""Largest ``eval --games/--deals``: every game of a lineup is held in one batch (about 5.5 KB
a game, so 1.6 GB for 100 000 groups of three games)."""
MIN_GROUPS = 2
"""Fewest duplicate seed groups: the paired intervals need at least two groups (one gives no
spread, so the interval would be undefined)."""


def _batch_sizes(text: str) -> tuple[int, ...]:
    """Parse ``"1,64,1024"`` into batch sizes from 1 to :data:`MAX_BATCH_SIZE` (an argparse ``type``)."""
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isascii() and part.isdigit() for part in parts):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated whole numbers from 1 to {MAX_BATCH_SIZE} (e.g. 1,64,1024), got {text!r}")
    sizes = tuple(int(part) for part in parts)
    if any(not 1 <= size <= MAX_BATCH_SIZE for size in sizes):
        raise argparse.ArgumentTypeError(f"batch sizes must be from 1 to {MAX_BATCH_SIZE}, got {text!r}")
    return sizes


def _seconds(text: str) -> float:
    """A measurement time in seconds, ``0.01 <= S <= 600`` (an argparse ``type``): NaN, infinity,
    zero, negative and vanishing times are refused (a NaN or infinite time would never end, one
    too short to finish a single step measures nothing)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not MIN_BENCH_SECONDS <= value <= MAX_BENCH_SECONDS:  # false for NaN too
        raise argparse.ArgumentTypeError(
            f"seconds must be a number from {MIN_BENCH_SECONDS:g} to {MAX_BENCH_SECONDS:g}, got {text!r}")
    return value


def _seed(text: str) -> int:
    """A seed, an integer in ``[0, 2**63)`` (an argparse ``type``)."""
    from imperiale_env.core.input_checks import InputError, seed

    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"the seed must be an integer in [0, 2**63), got {text!r}") from None
    try:
        return seed(value)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _count(low: int, high: int, what: str) -> Callable[[str], int]:
    """An argparse ``type``: an integer from ``low`` to ``high``, the error naming the range."""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be an integer from {low} to {high}, got {text!r}")
        return value

    parse.__name__ = what  # argparse names the type in some messages
    return parse


def _cmd_replay(args: argparse.Namespace) -> int:
    """``imperiale replay``: the game told trick by trick, or (``--json``) its score events as JSON."""
    from imperiale_env.core.input_checks import InputError
    from imperiale_env.records.game_records import RecordError, load_records, replay_record

    if args.indent is not None and not args.json:
        raise InputError("--indent sets the indentation of the JSON output: add --json, or leave --indent out")
    records = load_records(args.file)
    if not records:
        raise RecordError(f"{args.file} holds no record (a .jsonl file holds one record a line)")
    if args.record is not None and not 1 <= args.record <= len(records):
        raise InputError(f"--record must be from 1 to {len(records)} ({args.file} holds {len(records)} "
                         f"record{'s' if len(records) > 1 else ''}), got {args.record}")
    if args.record is None and len(records) > 1 and not args.json:
        raise InputError(f"{args.file} holds {len(records)} records; pick one with --record N (1 to {len(records)}), "
                         "or print them all with --json")
    chosen = range(len(records)) if args.record is None else [args.record - 1]

    def replayed(n: int, tell: Callable[[dict], object]) -> object:
        try:
            return tell(records[n])
        except RecordError as exc:
            where = f"{args.file}" + (f", record {n + 1} of {len(records)}" if len(records) > 1 else "")
            raise RecordError(f"{where}: {exc}") from None

    if not args.json:
        from imperiale_cli.replay import replay_text

        print(replayed(chosen[0], replay_text))
        return 0
    summaries = [replayed(n, replay_record) for n in chosen]
    result = summaries[0] if len(summaries) == 1 else summaries
    print(json.dumps(result, indent=2 if args.indent is None else args.indent))
    return 0


def _cmd_bench_solver_peers(args: argparse.Namespace) -> int:
    """``bench --solver`` / ``--peers``: the compiled solver, OpenSpiel's games beside the engine."""
    if args.peers:  # one core: cap the numeric libraries' threads before they load
        import os

        from imperiale_cli.devtools.bench_peers import THREAD_VARIABLES

        os.environ.update({name: "1" for name in THREAD_VARIABLES})
    from imperiale_cli.devtools.bench_peers import PeersUnavailable, run_peers_bench
    from imperiale_cli.devtools.bench_solver import run_solver_bench

    runs = []
    if args.solver:
        runs.append(lambda: run_solver_bench(args.seconds, args.rules))
    if args.peers:
        runs.append(lambda: run_peers_bench(max(args.batch_sizes), args.seconds, args.rules))
    try:
        for run in runs:
            for line in run():
                print(line, flush=True)
    except PeersUnavailable as exc:
        _error("bench", str(exc))
        return 1
    except ValueError as exc:
        _error("bench", str(exc))
        return 2
    return 0


def _cmd_bench_train(args: argparse.Namespace) -> int:
    """``bench --train``: the whole trainer's steady state, split by part, beside the engine alone."""
    from imperiale_cli.devtools.bench_train import run_train_bench
    from imperiale_train.config import ConfigError

    try:
        for line in run_train_bench(args.iterations, args.overrides, args.config):
            print(line, flush=True)
    except ConfigError as exc:
        _error("bench", str(exc))
        return 2
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.train:
        return _cmd_bench_train(args)
    if args.overrides or args.config is not None:
        _error("bench", "key=value overrides and --config go with --train (the trainer's configuration)")
        return 2
    if args.solver or args.peers:
        return _cmd_bench_solver_peers(args)
    from imperiale_cli.devtools.bench_engine import run_bench

    try:
        lines = run_bench(args.batch_sizes, args.seconds, args.rules, threads=args.threads)
    except ValueError as exc:  # a thread count above the cores numba may use
        _error("bench", str(exc))
        return 2
    for line in lines:
        print(line, flush=True)
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    if args.games is not None and args.deals is not None:
        _error("eval", "give --games N (whole games) or --deals N (single deals), not both")
        return 2
    groups = args.games if args.games is not None else args.deals if args.deals is not None else 100
    specs = [a.strip() for a in (args.agents or "").split(",")]
    if len(specs) < 2 or not all(specs):
        _error("eval", f"--agents needs at least two comma-separated agents, none empty, got {args.agents!r}")
        return 2
    from imperiale_agents.tournament.match import run_tournament
    from imperiale_agents.tournament.report import check_outputs, markdown, write_outputs
    from imperiale_env.core.rules import make_rules

    if args.out is not None:
        check_outputs(args.out)
    runner = None
    if args.ray is not None:
        from imperiale_agents.parallel.ray_tournament import RayMatchRunner

        runner = RayMatchRunner(args.ray)
    overrides = {} if args.target is None else {"target_imperiales": args.target}
    rules = make_rules(args.rules, **overrides)
    from imperiale_agents.parallel.process_pool import signals_as_interrupt

    with signals_as_interrupt():  # SIGTERM and SIGHUP keep the finished matches, as Ctrl-C does
        result = run_tournament(specs, rules, groups=groups, seed=args.seed, single_deal=args.deals is not None,
                                progress=not args.no_progress, workers=args.workers, stop_on_interrupt=True,
                                runner=runner)
    print(markdown(result), flush=True)
    if args.out is not None:
        for path in write_outputs(result, args.out).values():
            print(f"wrote {path}", file=sys.stderr)
    if result.stopped_by:
        _error("eval", f"{result.stopped_by} ({result.partial_note()})")
        return 2
    if result.partial:
        print(f"{PROG} eval: interrupted: {result.partial_note()}", file=sys.stderr)
        return 130
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    try:
        from imperiale_train.config import default_config_path, make_config
        from imperiale_train.run import TrainingError, config_for_resume
    except ModuleNotFoundError as exc:
        _error("train", f"training needs torch and the train package ({exc}); pip install 'imperiale[train]'")
        return 1
    try:
        if args.resume:
            cfg = config_for_resume(args.config, args.overrides)
        else:
            cfg = make_config(args.config if args.config is not None else default_config_path(), args.overrides)
    except TrainingError as exc:
        _error("train", str(exc))
        return 1
    if args.supervised and cfg.rollout_workers > 0:
        # Ray's core may end this process without a word when its node dies: watch it from outside
        from imperiale_cli.supervise import supervised

        return supervised(lambda: _run_training(cfg, args.resume), lambda code: _ended_abruptly(cfg, code))
    return _run_training(cfg, args.resume)


def _ended_abruptly(cfg, code: int) -> str:
    """The line said when the training process ended under Python: what happened, and what is left."""
    from imperiale_train.run import CHECKPOINT_NAME

    how = f"was killed by signal {-code}" if code < 0 else f"ended with status {code}"
    run_dir = Path(cfg.run_dir)
    left = (f"its last checkpoint is kept: resume with: {PROG} train --resume run_dir={shlex.quote(str(run_dir))}"
            if (run_dir / CHECKPOINT_NAME).exists() else
            "it had saved no checkpoint yet: run the same command again")
    return (f"{PROG} train: error: the training process {how} without a word of its own (with Ray rollout "
            f"workers: Ray ends it when its node dies; Ray's lines above say why); {left}")


def _run_training(cfg, resume: bool) -> int:
    from imperiale_train.run import TrainingError, TrainingInterrupted, train

    try:
        result = train(cfg, resume=resume)
    except TrainingError as exc:
        _error("train", str(exc))
        return 1
    except TrainingInterrupted as exc:
        if exc.checkpoint is None:
            print(f"{PROG} train: interrupted before the first iteration ended; nothing to resume", file=sys.stderr)
        else:
            print(f"{PROG} train: interrupted; iteration {exc.iteration} is saved in {exc.checkpoint}\n"
                  f"resume with: {PROG} train --resume run_dir={shlex.quote(str(exc.run_dir))}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print(f"{PROG} train: interrupted; nothing more was saved", file=sys.stderr)
        return 130
    print(_train_summary(result))
    return 0


def _train_summary(result: dict) -> str:
    """Where a finished run's outputs are, its last win rates, and the commands to use them."""
    out = result["outputs"]
    ckpt = shlex.quote(str(out["checkpoint"]))
    done, ran = result["iteration"], result["iterations_run"]
    which = f"{done} iterations" if ran == done else f"iterations {done - ran + 1}-{done} (resumed at {done - ran})"
    lines = [f"trained {which}, {result['global_step']} decisions in all, in {result['seconds']:.0f} s"]
    for key, value in result["eval"].items():
        if key.startswith("eval/win_rate_"):
            opp = key.removeprefix("eval/win_rate_")
            low, high = result["eval"][f"eval/ci_low_{opp}"], result["eval"][f"eval/ci_high_{opp}"]
            lines.append(f"  win rate vs {opp}: {100 * value:.1f}% [{100 * low:.1f}, {100 * high:.1f}]")
    lines.append("outputs:")
    what = {"checkpoint": "the policy, and all to resume", "metrics": "one JSON line per iteration",
            "tensorboard": "TensorBoard logs", "plot": "learning curves"}
    lines += [f"  {name:<11} {path}  ({what[name]})" for name, path in out.items()]
    lines += ["next:", f"  {PROG} play --opponent neural:{ckpt}", f"  {PROG} eval --agents neural:{ckpt},heuristic"]
    if "tensorboard" in out:
        lines.append(f"  tensorboard --logdir {shlex.quote(str(out['tensorboard']))}")
    run_dir = shlex.quote(str(Path(out["checkpoint"]).parent))
    lines.append(f"  {PROG} train --resume run_dir={run_dir} iterations={2 * result['iteration']}   (train further)")
    return "\n".join(lines)


def _cmd_export(args: argparse.Namespace) -> int:
    """``imperiale export CHECKPOINT OUT``: a bad input raises InputError or CheckpointError (exit 2)."""
    try:
        from imperiale_train.export import export_policy
    except ModuleNotFoundError as exc:
        _error("export", f"exporting a policy needs torch ({exc}); pip install 'imperiale[train]'")
        return 1
    from imperiale_agents.policies.policy_file import read_policy

    out = export_policy(args.checkpoint, args.out)
    made = read_policy(out).provenance
    seconds = "unknown" if made.get("train_seconds") is None else f"{made['train_seconds']:.0f} s"
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB): the policy of iteration {made.get('iteration')} of "
          f"{args.checkpoint} (seed {made.get('seed')}, training time {seconds})\n"
          f"play it: {PROG} play --opponent neural:{shlex.quote(str(out))}")
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from imperiale_agents.parallel.process_pool import signals_as_interrupt
    from imperiale_cli.play import play_game
    from imperiale_env.core.rules import make_rules

    rules = make_rules(args.rules)
    with signals_as_interrupt():  # SIGTERM, SIGHUP (the terminal closed): the record is saved as on Ctrl-C
        result = play_game(rules, args.opponent, seed=args.seed, seat=args.seat, save=args.save,
                           confirm_forced=args.confirm_forced)
    return 130 if result.status == "interrupted" else 0


def _cmd_analyse(args: argparse.Namespace) -> int:
    """``imperiale analyse``: every input is checked before the (long) analysis starts."""
    from imperiale_agents.analysis.record_analysis import MAX_SAMPLES, analyse_record, report_text
    from imperiale_env.core.input_checks import InputError, input_file, output_file, seed
    from imperiale_env.records.game_records import load_records

    # A bad input raises InputError or RecordError, which main() reports (exit 2).
    path = input_file(args.record, "record file")
    if not 1 <= args.samples <= MAX_SAMPLES:
        raise InputError(f"--samples must be from 1 to {MAX_SAMPLES}, got {args.samples}")
    if args.horizon is not None and not 1 <= args.horizon <= 12:
        raise InputError(f"--horizon must be from 1 to 12 tricks, got {args.horizon}")
    seed(args.seed, "--seed")
    out = output_file(args.out, "--out file", may_exist=False) if args.out else None
    try:
        records = load_records(path)
    except OSError as exc:
        raise InputError(f"cannot read {args.record}: {exc.strerror or exc}") from None
    if len(records) != 1:
        raise InputError(f"{path} holds {len(records)} records; analyse takes a file with one record")
    belief = None
    if args.beliefs or args.belief is not None:
        from imperiale_agents.analysis.belief_report import load_belief
        from imperiale_agents.search.belief_model import BeliefFileError
        from imperiale_env.records.game_records import game_from_record

        rules = game_from_record(records[0]).rules  # a bad record is reported before the belief file
        belief_file = input_file(args.belief, "belief file") if args.belief is not None else None
        try:
            belief = load_belief(rules, belief_file)
        except BeliefFileError as exc:
            raise InputError(str(exc)) from None
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(unit="decision", desc="analysing", dynamic_ncols=True)

    def progress(done: int, total: int, deal: int) -> None:
        if bar is not None:
            bar.total = total
            bar.set_postfix_str(f"deal {deal + 1}", refresh=False)
            bar.update(done - bar.n)

    try:
        analysis = analyse_record(records[0], samples=args.samples, seed=args.seed, horizon=args.horizon,
                                  belief=belief, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    # wrapped at the terminal's width; a file or a pipe gets whole lines, one a decision, for tools
    print(report_text(analysis, shutil.get_terminal_size().columns if sys.stdout.isatty() else None))
    if out is not None:
        from imperiale_env.core.atomic import write_atomic

        write_atomic(out, json.dumps(analysis, indent=1) + "\n", what="analysis")
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    """``imperiale serve``: the web table (needs the ``web`` extra: Flask)."""
    try:
        from imperiale_web.app import ServeError, serve
    except ModuleNotFoundError as exc:
        _error("serve", f"the web table needs Flask ({exc}); pip install 'imperiale[web]'")
        return 1
    try:
        serve(host=args.host, port=args.port, records=args.records,
              agents=tuple(a.strip() for a in args.agents.split(",")))
    except ServeError as exc:
        _error("serve", str(exc))
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``imperiale`` command."""
    from imperiale_agents.registry import AGENT_FORMS  # the forms as the registry lists them (a light import)

    parser = argparse.ArgumentParser(prog=PROG, description="L'Impériale: engine, agents and training.")
    parser.add_argument("--version", action="store_true", help="print the package version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help_text: str, handler: Handler) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    replay = add("replay", "tell a game record trick by trick: the hands, declarations, each trick with who won "
                 "it and why, the scores (--json: its score events as JSON)", _cmd_replay)
    replay.add_argument("file", metavar="FILE", help="a record file (.json, or .jsonl: one record a line)")
    replay.add_argument("--record", type=int, metavar="N",
                        help="the record to replay in a .jsonl of several, numbered from 1 (needed for the text "
                        "of such a file; --json prints them all without it)")
    replay.add_argument("--json", action="store_true",
                        help="print the score events and the score after each deal as JSON (docs/records.md)")
    replay.add_argument("--indent", type=_count(0, 16, "--indent"), metavar="N",
                        help="JSON indentation with --json, 0 to 16 (default 2)")

    bench = add("bench", "decisions per second of every engine, measured in one run", _cmd_bench)
    bench.add_argument("--seconds", type=_seconds, default=2.0, metavar="S",
                       help=f"seconds per measurement, 0 < S <= {MAX_BENCH_SECONDS:g} "
                       "(default 2: the whole run takes about 20 s)")
    bench.add_argument(
        "--batch-sizes",
        type=_batch_sizes,
        default=DEFAULT_BATCH_SIZES,
        metavar="N,N,...",
        help=f"comma-separated batch sizes, each 1 to {MAX_BATCH_SIZE} (default 1,64,1024,4096)",
    )
    bench.add_argument("--rules", default=DEFAULT_RULES, metavar="PRESET", help="rules preset")
    bench.add_argument("--threads", type=_count(1, 1024, "--threads"), default=1, metavar="N",
                       help="threads of the batched engine's compiled loops (default 1; above 1 each batch is "
                       "also measured on one thread, for the ratio)")
    bench.add_argument("--solver", action="store_true",
                       help="measure the compiled solver and full-depth pimc:16 against the pure-Python solver")
    bench.add_argument("--peers", action="store_true",
                       help="measure OpenSpiel's hearts and skat beside the batched engine at the largest batch "
                       "size, one core (needs the optional 'bench' extra)")
    bench.add_argument("--train", action="store_true",
                       help="measure the whole trainer's steady-state decisions/s, split into features, rollout "
                       "networks, the rest of the rollout, update and bookkeeping, beside the engine alone (needs "
                       "the 'train' extra); key=value overrides and --config set its configuration")
    bench.add_argument("--iterations", type=_count(2, 10_000, "--iterations"), default=8, metavar="N",
                       help="with --train: iterations measured after 2 of warm-up (default 8)")
    bench.add_argument("--config", default=None, metavar="YAML",
                       help="with --train: the training configuration (default: the README's main job)")
    bench.add_argument("overrides", nargs="*", metavar="key=value", help="with --train: training config overrides")

    train = add("train", "self-play training", _cmd_train)
    from imperiale_train.config import config_help

    train.formatter_class = argparse.RawDescriptionHelpFormatter
    train.epilog = config_help()
    train.add_argument("--config", metavar="FILE|NAME", help="YAML training configuration: a file, or the name of a "
                       "shipped one (champion, ppo_selfplay, ppo_gpu)")
    train.add_argument("--resume", action="store_true",
                       help="continue the run in run_dir= from its checkpoint, with the configuration saved there")
    train.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="configuration overrides")

    evaluate = add("eval", "play a duplicate round-robin tournament between agents", _cmd_eval)
    evaluate.add_argument(
        "--agents", default="random,heuristic", metavar="A,B,...",
        help=f"comma-separated agent specs: {AGENT_FORMS} (default random,heuristic)",
    )
    groups = _count(MIN_GROUPS, MAX_GROUPS, "the number of duplicate seed groups")
    evaluate.add_argument(
        "--games", type=groups, metavar="N",
        help="whole games: N duplicate seed groups per pairing (each seed played with the seats swapped/rotated), "
        f"{MIN_GROUPS} to {MAX_GROUPS} (default 100)",
    )
    evaluate.add_argument(
        "--deals", type=groups, metavar="N",
        help=f"single deals instead of whole games: N duplicate seed groups of one deal per pairing, "
        f"{MIN_GROUPS} to {MAX_GROUPS}",
    )
    evaluate.add_argument("--target", type=int, metavar="K", help="impériales to win a game (default: the preset's)")
    evaluate.add_argument("--seed", type=_seed, default=0, metavar="S", help="random seed, 0 <= S < 2**63 (default 0)")
    evaluate.add_argument("--out", metavar="DIR",
                          help="write results.json, results.md and matrix.png to DIR (files there are never replaced)")
    evaluate.add_argument("--rules", default=DEFAULT_RULES, metavar="PRESET", help="rules preset")
    evaluate.add_argument("--workers", type=int, default=1, metavar="W",
                          help="processes for pimc and ismcts, 1 to 256 (default 1)")
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")
    evaluate.add_argument(
        "--ray", nargs="?", const="local", metavar="ADDRESS",
        help="play the matches as Ray tasks: on the cluster at ADDRESS (auto, HOST:PORT, ray://HOST:PORT) or, "
        "without ADDRESS, on a local Ray instance; same results as without --ray (needs imperiale[ray])",
    )

    play = add("play", "play a whole game against a bot in the terminal", _cmd_play)
    play.add_argument(
        "--opponent", default="heuristic", metavar="AGENT",
        help=f"the bot, in every other seat (default heuristic): {AGENT_FORMS}; champion is the trained policy "
        "shipped for the rules, champion:search the shipped search, module:Class or path/to/file.py:Class your own",
    )
    play.add_argument("--rules", default=DEFAULT_RULES, metavar="PRESET", help="rules preset (default academie)")
    play.add_argument("--seed", type=_seed, metavar="S",
                      help="game seed, 0 <= S < 2**63 (default: drawn at random and printed)")
    play.add_argument("--seat", type=int, default=0, metavar="N", help="your seat, 0 .. players-1 (default 0)")
    play.add_argument("--confirm-forced", action="store_true",
                      help="ask for a card even when it is the only legal one (by default it is played for you)")
    play.add_argument("--save", metavar="FILE",
                      help="write the game record to FILE: a new .json file, or a .jsonl file to append to")

    export = add("export", "write the policy of a training checkpoint to a new, small .npz file that plays without "
                 "torch (no optimiser or game state; the rules and how it was trained kept); also converts an "
                 "exported policy of earlier releases (.pt)", _cmd_export)
    export.add_argument("checkpoint", metavar="CHECKPOINT",
                        help="a training checkpoint (RUN_DIR/checkpoint.pt) or an old exported policy (.pt)")
    export.add_argument("out", metavar="OUT", help="the policy file to write, OUT.npz (a new file: nothing is "
                        "overwritten)")

    analyse = add("analyse", "value every decision of a record (open-hand solver and pimc) and mark the losses",
                  _cmd_analyse)
    analyse.add_argument("record", metavar="RECORD", help="a record file (.json, or .jsonl holding one record)")
    analyse.add_argument("--samples", type=int, default=8, metavar="N", help="pimc samples per decision (default 8)")
    analyse.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the pimc samples (default 0)")
    analyse.add_argument("--horizon", type=int, metavar="K",
                         help="value cards only with at most K tricks left (default 12 with two players, 6 with three)")
    analyse.add_argument("--out", metavar="FILE", help="write the annotated record (JSON) to FILE (a new file)")
    analyse.add_argument("--no-progress", action="store_true",
                         help="no progress bar (decisions valued, of how many, the deal) on stderr")
    analyse.add_argument("--beliefs", action="store_true",
                         help="at each decision, the belief model's probability of each card the acting player has "
                         "not seen lying in each other hand or the talon (from his observation only)")
    analyse.add_argument("--belief", metavar="FILE", help="the belief model to use (implies --beliefs; default: the "
                         "one shipped for the record's rules)")

    serve = add("serve", "the card table in a web browser: play, replay and analyse", _cmd_serve)
    serve.add_argument("--port", type=int, default=8000, metavar="PORT", help="port (default 8000)")
    serve.add_argument("--host", default="127.0.0.1", metavar="HOST", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--records", metavar="DIR", help="a folder of records to offer for replay")
    from imperiale_web import DEFAULT_AGENTS  # no Flask: the package's top holds only this list

    offered = ",".join(DEFAULT_AGENTS)
    serve.add_argument("--agents", default=offered, metavar="SPECS", help="the opponents the page may choose, "
                       f"comma-separated agent specs (default {offered}); the page can ask for no other")

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``imperiale`` command with ``argv`` (default: ``sys.argv[1:]``); the exit status.

    Every command ends in its result or in one line on stderr: an unusable input (the
    :data:`USER_ERRORS`) exits 2, Ctrl-C 130, and a reader that stops reading the output
    (``imperiale replay FILE | head``) 141, the status of a process ended by SIGPIPE, quietly.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(f"{PROG} {package_version()}")
        return 0
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    args.supervised = argv is None  # the real command line: work that may die silently is watched from outside
    try:
        return args.handler(args)
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        print(f"\n{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not _is_user_error(exc):
            raise
        _error(args.command, str(exc))
        return 2


def _silence_stdout() -> None:
    """Point stdout at /dev/null after a broken pipe, so that the interpreter's final flush of
    what is still buffered does not fail again with a second traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (tests capture it)
        pass


if __name__ == "__main__":
    sys.exit(main())
