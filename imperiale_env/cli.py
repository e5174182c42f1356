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
    from .records import RecordError, load_records, replay_record

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
        from .bench import run_bench
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


def _cmd_not_built(args: argparse.Namespace) -> int:
    print(f"{PROG} {args.command}: {args.feature} is not built yet; nothing was run.", file=sys.stderr)
    return 1


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

    bench = add("bench", "measure the throughput of the batched engine", _cmd_bench)
    bench.add_argument("--seconds", type=float, default=5.0, metavar="S", help="time per batch size")
    bench.add_argument(
        "--batch-sizes",
        type=_batch_sizes,
        default=DEFAULT_BATCH_SIZES,
        metavar="N,N,...",
        help="comma-separated batch sizes (default 1,64,1024,4096)",
    )
    bench.add_argument("--rules", default=DEFAULT_RULES, metavar="PRESET", help="rules preset")

    train = add("train", "self-play training", _cmd_not_built)
    train.set_defaults(feature="self-play training")
    train.add_argument("--config", metavar="FILE", help="YAML training configuration")
    train.add_argument("--resume", action="store_true", help="resume from the latest checkpoint")
    train.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="configuration overrides")

    evaluate = add("eval", "play a tournament between agents", _cmd_not_built)
    evaluate.set_defaults(feature="the agent tournament")
    evaluate.add_argument("--agents", metavar="A,B,...", help="comma-separated agent names")
    evaluate.add_argument("--deals", type=int, metavar="N", help="number of deals per pairing")
    evaluate.add_argument("--seed", type=int, metavar="S", help="random seed")
    evaluate.add_argument("--out", metavar="DIR", help="output folder for results and records")

    play = add("play", "play against an agent in the terminal", _cmd_not_built)
    play.set_defaults(feature="interactive play")
    play.add_argument("--opponent", metavar="AGENT", help="the agent to play against")
    play.add_argument("--rules", default=DEFAULT_RULES, metavar="PRESET", help="rules preset")
    play.add_argument("--seed", type=int, metavar="S", help="random seed")
    play.add_argument("--save", metavar="FILE", help="write the game record to FILE")

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
