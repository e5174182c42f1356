"""The ``imperiale`` command line.

Subcommands:

- ``replay FILE``: replay a game record (``.json`` or ``.jsonl``, see RECORDS.md) and print
  its score events as JSON;
- ``bench``: throughput of the batched engine;
- ``train``, ``eval``, ``play``: self-play training, agent tournaments and interactive play.
  Their options are parsed already; the commands themselves arrive with that work.

Each subcommand's implementation is imported only when it runs, so that ``imperiale --version``
and ``--help`` never depend on the engine, the training code or torch.
"""

from __future__ import annotations

import argparse
import json
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


def _batch_sizes(text: str) -> tuple[int, ...]:
    """Parse ``"1,64,1024"`` into positive batch sizes (an argparse ``type``)."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError(f"batch sizes must be positive, got {text!r}")
    return sizes


def _cmd_replay(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if not path.is_file():
        _error("replay", f"no such file: {path}")
        return 2
    from imperiale_env.records import RecordError, load_records, replay_record

    try:
        summaries = [replay_record(record) for record in load_records(path)]
    except OSError as exc:
        _error("replay", f"cannot read {path}: {exc.strerror or exc}")
        return 2
    except (RecordError, json.JSONDecodeError) as exc:
        _error("replay", f"{path}: {exc}")
        return 2
    result = summaries[0] if len(summaries) == 1 else summaries
    print(json.dumps(result, indent=args.indent))
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    try:
        from imperiale_env.bench import run_bench
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.bench":
            raise
        print(f"{PROG} bench: the batched engine benchmark is not available yet", file=sys.stderr)
        return 1
    try:
        lines = run_bench(args.batch_sizes, args.seconds, args.rules)
    except ValueError as exc:
        _error("bench", str(exc))
        return 2
    for line in lines:
        print(line)
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    if args.games is not None and args.deals is not None:
        _error("eval", "give --games N (whole games) or --deals N (single deals), not both")
        return 2
    groups = args.games if args.games is not None else args.deals if args.deals is not None else 100
    if groups < 1:
        _error("eval", f"the number of duplicate groups must be at least 1, got {groups}")
        return 2
    specs = [a.strip() for a in (args.agents or "").split(",") if a.strip()]
    if len(specs) < 2:
        _error("eval", f"--agents needs at least two comma-separated agents, got {args.agents!r}")
        return 2
    from agents.base import AgentError
    from agents.tournament import run_tournament, write_outputs
    from imperiale_env.rules import RulesError, make_rules

    try:
        overrides = {} if args.target is None else {"target_imperiales": args.target}
        rules = make_rules(args.rules, **overrides)
        result = run_tournament(specs, rules, groups=groups, seed=args.seed, single_deal=args.deals is not None,
                                progress=not args.no_progress, workers=args.workers)
    except (AgentError, RulesError) as exc:
        _error("eval", str(exc))
        return 2
    print(result.markdown())
    if args.out:
        for path in write_outputs(result, args.out).values():
            print(f"wrote {path}", file=sys.stderr)
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    try:
        from train.checkpoint import CheckpointError
        from train.config import ConfigError, default_config_path, make_config
        from train.run import train
    except ModuleNotFoundError as exc:
        _error("train", f"training needs torch and the train package ({exc}); pip install -e '.[train]'")
        return 1
    path = args.config if args.config is not None else default_config_path()
    if args.config is not None and not Path(args.config).is_file():
        _error("train", f"no such config file: {args.config}")
        return 2
    try:
        cfg = make_config(path, args.overrides)
        result = train(cfg, resume=args.resume)
    except (ConfigError, CheckpointError) as exc:
        _error("train", str(exc))
        return 2
    ev = {k: v for k, v in result["eval"].items() if k.startswith("eval/win_rate")}
    print(json.dumps({"checkpoint": result["checkpoint"], "iteration": result["iteration"],
                      "global_step": result["global_step"], **ev}))
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from agents.base import AgentError
    from imperiale_env.rules import RulesError, make_rules

    from .play import PlayError, play_game

    try:
        rules = make_rules(args.rules)
        result = play_game(rules, args.opponent, seed=args.seed, seat=args.seat, save=args.save)
    except (AgentError, PlayError, RulesError) as exc:
        _error("play", str(exc))
        return 2
    return 130 if result.status == "interrupted" else 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``imperiale`` command."""
    parser = argparse.ArgumentParser(prog=PROG, description="L'Impériale: engine, agents and training.")
    parser.add_argument("--version", action="store_true", help="print the package version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help_text: str, handler: Handler) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    replay = add("replay", "replay a game record and print its score events as JSON", _cmd_replay)
    replay.add_argument("file", metavar="FILE", help="a record file (.json or .jsonl)")
    replay.add_argument("--indent", type=int, default=2, metavar="N", help="JSON indentation (default 2)")

    bench = add("bench", "decisions per second of every engine, measured in one run", _cmd_bench)
    bench.add_argument("--seconds", type=float, default=2.0, metavar="S",
                       help="seconds per measurement (default 2: the whole run takes about 20 s)")
    bench.add_argument(
        "--batch-sizes",
        type=_batch_sizes,
        default=DEFAULT_BATCH_SIZES,
        metavar="N,N,...",
        help="comma-separated batch sizes (default 1,64,1024,4096)",
    )
    bench.add_argument("--rules", default=DEFAULT_RULES, metavar="PRESET", help="rules preset")

    train = add("train", "self-play training", _cmd_train)
    train.add_argument("--config", metavar="FILE", help="YAML training configuration")
    train.add_argument("--resume", action="store_true", help="resume from the latest checkpoint")
    train.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="configuration overrides")

    evaluate = add("eval", "play a duplicate round-robin tournament between agents", _cmd_eval)
    evaluate.add_argument(
        "--agents", default="random,heuristic", metavar="A,B,...",
        help="comma-separated agent specs: random, heuristic, pimc, pimc:N, pimc:N:K, neural:PATH "
        "(default random,heuristic)",
    )
    evaluate.add_argument(
        "--games", type=int, metavar="N",
        help="whole games: N duplicate seed groups per pairing (each seed played with the seats swapped/rotated)",
    )
    evaluate.add_argument(
        "--deals", type=int, metavar="N",
        help="single deals instead of whole games: N duplicate seed groups of one deal per pairing",
    )
    evaluate.add_argument("--target", type=int, metavar="K", help="impériales to win a game (default: the preset's)")
    evaluate.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    evaluate.add_argument("--out", metavar="DIR", help="write results.json, results.md and matrix.png to DIR")
    evaluate.add_argument("--rules", default=DEFAULT_RULES, metavar="PRESET", help="rules preset")
    evaluate.add_argument("--workers", type=int, default=1, metavar="W", help="processes for pimc (default 1)")
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")

    play = add("play", "play a whole game against a bot in the terminal", _cmd_play)
    play.add_argument(
        "--opponent", default="heuristic", metavar="AGENT",
        help="the bot, in every other seat: heuristic (default), random, pimc, pimc:N, neural:PATH",
    )
    play.add_argument("--rules", default=DEFAULT_RULES, metavar="PRESET", help="rules preset (default academie)")
    play.add_argument("--seed", type=int, metavar="S", help="game seed (default: drawn at random and printed)")
    play.add_argument("--seat", type=int, default=0, metavar="N", help="your seat, 0 .. players-1 (default 0)")
    play.add_argument("--save", metavar="FILE", help="write the game record to FILE (.json, or .jsonl to append)")

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``imperiale`` command with ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(f"{PROG} {package_version()}")
        return 0
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
