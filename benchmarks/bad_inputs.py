"""Try hundreds of bad inputs on every surface of the suite and say how each one ended.

Every case is one thing a user could hand the suite by mistake (or on purpose): a damaged
record file, a seed out of range, an agent spec with a typo, an action of the wrong type, a
checkpoint that carries code. Each is run and its outcome classified:

* ``clear``: a clear error: the command exits with status 1 or 2 and says ``error:``, or the
  library raises one of the suite's documented exception types (or a ``ValueError`` /
  ``TypeError`` raised by the suite's own code) with a message; an environment that refuses
  an action the documented way (the Gymnasium env's ``illegal_action``, the PettingZoo
  wrappers' termination with reward -1) counts too;
* ``accepted``: it ran to the end as a valid input. These are listed, so that a person can
  judge whether each one should have been refused; a case marked *should be refused* is one
  that the bad-input issue names as silently wrong;
* ``traceback``: any other exception (an ``AssertionError``, an ``OverflowError``, a numpy or
  torch error, a ``BrokenPipeError`` ...);
* ``hang``: still running after the time limit (``--timeout``, 20 s by default);
* ``other``: anything else, such as a record a user wrote that was overwritten, code that ran
  from a checkpoint, or an exit status with no message.

Most cases run in this process: the command line through :func:`imperiale_cli.cli.main` with
stdin, stdout and stderr replaced, with an alarm as a time limit. Cases that could hang in C
code or allocate without bound run in a subprocess with a time limit and a 4 GB memory cap.
Everything is written in a scratch folder that is removed at the end.

    python benchmarks/bad_inputs.py                    # every case, a table by area
    python benchmarks/bad_inputs.py --fast             # the in-process subset the tests run
    python benchmarks/bad_inputs.py --out report.md    # also the table and every case (.md or .json)
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import importlib.util
import io
import json
import math
import os
import pathlib
import pickle
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

OUTCOMES = ("clear", "accepted", "traceback", "hang", "other")
PACKAGES = ("imperiale_env", "imperiale_agents", "imperiale_train", "imperiale_web", "imperiale_cli")
MEMORY_CAP = 4 << 30  # bytes of address space for a subprocess case
TINY_TRAIN = ("iterations=1", "num_envs=8", "num_steps=8", "num_minibatches=1", "update_epochs=1", "hidden=8",
              "eval_groups=2", "eval_every=0", "eval_single_deal=true", "tensorboard=false", "plot=false",
              "progress=false", "checkpoint_every=0", "threads=1", "pool_every=1")


class Hang(Exception):
    """Raised by the alarm when an in-process case runs past its time limit."""


@dataclass
class Refused:
    """What a case returns when the suite declined the input the documented way without raising."""

    message: str


@dataclass
class Case:
    """One bad input. Exactly one of ``fn`` (a library call), ``argv`` (the command line, in
    process) and ``command`` (a subprocess) is set."""

    area: str
    name: str
    fn: Callable[[], Any] | None = None
    argv: list[str] | None = None
    command: list[str] | None = None
    stdin: str = ""
    expect: str = "either"  # "error": the issue asks for a clear error; "ok": a valid input
    check: Callable[[], str | None] | None = None  # after the run: a problem (data lost, code ran) or None
    fast: bool = True  # in process and quick: part of tests/test_bad_inputs.py
    timeout: float | None = None  # seconds before it counts as a hang, where the run's own is too short

    @property
    def in_process(self) -> bool:
        return self.command is None


@dataclass
class Result:
    case: Case
    outcome: str
    detail: str
    seconds: float = 0.0

    def row(self) -> dict[str, Any]:
        return {"area": self.case.area, "case": self.case.name, "outcome": self.outcome, "expect": self.case.expect,
                "detail": self.detail, "seconds": round(self.seconds, 2)}


# ---------------------------------------------------------------------------------------- classifying


def _documented_types() -> tuple[type[BaseException], ...]:
    from imperiale_agents.base import AgentError
    from imperiale_env.core.rules import RulesError
    from imperiale_env.records.game_records import RecordError
    from imperiale_env.reference.game import IllegalActionError

    types: list[type[BaseException]] = [AgentError, IllegalActionError, RecordError, RulesError]
    with contextlib.suppress(ImportError):
        from imperiale_env.core.input_checks import InputError

        types.append(InputError)
    with contextlib.suppress(ImportError):
        from imperiale_cli.play import PlayError

        types.append(PlayError)
    with contextlib.suppress(ImportError):
        from imperiale_train.checkpoint import CheckpointError
        from imperiale_train.config import ConfigError

        types += [CheckpointError, ConfigError]
    with contextlib.suppress(ImportError):
        from imperiale_agents.parallel.process_pool import WorkerError
        from imperiale_env.core.atomic import WriteError

        types += [WorkerError, WriteError]
    with contextlib.suppress(ImportError):
        import gymnasium

        types.append(gymnasium.error.Error)  # Gymnasium's own documented errors (seeds, reset order)
    return tuple(types)


@functools.cache
def _our_folders() -> tuple[pathlib.Path, ...]:
    """The folders of the suite's own packages wherever they are installed (this checkout, an
    editable install of another one, a venv's site-packages), and this checkout's benchmarks."""
    folders = [REPO / "benchmarks"]
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        folders += [pathlib.Path(p).resolve() for p in (spec.submodule_search_locations or [])] if spec else []
    return tuple(folders)


def _ours(filename: str) -> bool:
    """Is ``filename`` a module of the suite's own (not of a library it calls)?"""
    path = pathlib.Path(filename).resolve()
    return any(folder in path.parents for folder in _our_folders())


def _raised_by_suite(exc: BaseException) -> bool:
    """Was ``exc`` raised by the suite's own code (its last frame in this repository, not a library)?"""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    return _ours(frames[-1].filename)


def classify_exception(exc: BaseException) -> tuple[str, str]:
    text = f"{type(exc).__name__}: {exc}".strip()
    if isinstance(exc, Hang):
        return "hang", str(exc)
    message = str(exc).strip()
    if message and isinstance(exc, _documented_types()):
        return "clear", text
    chain: list[BaseException] = [exc]
    # re-raised by a library: gymnasium.make adds its own words, "from" the original (1.4) or while
    # handling it (1.2, its __context__); the message still carries ours
    while (chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    if message and isinstance(exc, (ValueError, TypeError, RuntimeError)) and any(map(_raised_by_suite, chain)):
        return "clear", text
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {pathlib.Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return "traceback", text + where


@contextlib.contextmanager
def _alarm(seconds: float):
    def ring(signum, frame):
        raise Hang(f"still running after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:400] if lines else ""


def run_cli_in_process(argv: list[str], stdin: str, timeout: float) -> tuple[str, str]:
    from imperiale_cli.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        with _alarm(timeout):
            try:
                rc = main(argv)
            except SystemExit as exc:  # argparse
                rc = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - every way a case can end is an outcome
        if isinstance(exc, KeyboardInterrupt):
            raise
        return classify_exception(exc)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return _classify_exit(rc, out.getvalue(), err.getvalue())


_CLEAR_NAMES = ("InputError", "RecordError", "RulesError", "PlayError", "AgentError", "ConfigError",
                "CheckpointError", "ValueError", "TypeError", "RuntimeError")


def _raised_by_suite_text(stderr: str) -> bool:
    """A Python API case run in a subprocess ends in a traceback whatever it raises: count it as
    a clear error when the exception is one of the suite's (or a ValueError, TypeError or
    RuntimeError) raised in this repository's code, with a message, as in-process cases are."""
    frames = re.findall(r'File "([^"]+)", line \d+', stderr)
    last = _last_line(stderr)
    name, _, message = last.partition(":")
    if not frames or not message.strip() or name.rsplit(".", 1)[-1] not in _CLEAR_NAMES:
        return False
    return _ours(frames[-1])


def _classify_exit(rc: int | None, stdout: str, stderr: str) -> tuple[str, str]:
    if "Traceback (most recent call last)" in stderr:
        return ("clear" if _raised_by_suite_text(stderr) else "traceback"), _last_line(stderr)
    if rc == 0:
        return "accepted", _last_line(stdout) or "exit 0"
    if rc in (1, 2) and "error" in stderr.lower():
        return "clear", _last_line(stderr)
    return "other", f"exit {rc}: {_last_line(stderr) or _last_line(stdout)}"


def run_subprocess(command: list[str], stdin: str, timeout: float, cwd: pathlib.Path) -> tuple[str, str]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    try:
        proc = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env=env, preexec_fn=cap, errors="replace")
    except subprocess.TimeoutExpired:
        return "hang", f"still running after {timeout:g} s (killed)"
    if proc.returncode < 0:
        return "other", f"killed by signal {-proc.returncode}: {_last_line(proc.stderr)}"
    if "MemoryError" in proc.stderr:
        return "traceback", _last_line(proc.stderr)
    return _classify_exit(proc.returncode, proc.stdout, proc.stderr)


def run_case(case: Case, timeout: float, scratch: pathlib.Path) -> Result:
    timeout = max(timeout, case.timeout or 0.0)
    start = time.perf_counter()
    if case.command is not None:
        outcome, detail = run_subprocess(case.command, case.stdin, timeout, scratch)
    elif case.argv is not None:
        outcome, detail = run_cli_in_process(case.argv, case.stdin, timeout)
    else:
        assert case.fn is not None
        try:
            with _alarm(timeout), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                value = case.fn()
            if isinstance(value, Refused):
                outcome, detail = "clear", value.message
            else:
                outcome, detail = "accepted", _short(value)
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            outcome, detail = classify_exception(exc)
    if case.check is not None:
        problem = case.check()
        if problem:
            outcome, detail = "other", f"{problem} ({outcome}: {detail})"
    return Result(case, outcome, detail.replace("\n", " ")[:500], time.perf_counter() - start)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# ---------------------------------------------------------------------------------------- the scratch folder


class Scratch:
    """The files the cases need, in a temporary folder: records, configs, checkpoints, special files."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self._n = 0
        self.record = self._valid_record()
        self.record_file = self.write("valid.json", json.dumps(self.record))
        self.dir = root / "a_directory"
        self.dir.mkdir()
        self.fifo = root / "a_fifo.json"
        os.mkfifo(self.fifo)
        self.missing = root / "missing" / "nothing.json"
        self._checkpoint: pathlib.Path | None = None

    def path(self, name: str) -> pathlib.Path:
        self._n += 1
        p = self.root / f"{self._n:03d}_{name}"
        return p

    def write(self, name: str, data: str | bytes) -> pathlib.Path:
        p = self.path(name)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")
        return p

    def run_dir(self) -> str:
        return str(self.path("run"))

    @staticmethod
    def _valid_record() -> dict[str, Any]:
        from imperiale_env.records.game_records import record_from_game
        from imperiale_env.reference.game import Game

        game = Game("academie", 0, single_deal=True)
        rng = np.random.default_rng(0)
        while game.decision is not None:
            game.step(int(rng.choice(game.legal_actions())))
        return record_from_game(game)

    def checkpoint(self) -> pathlib.Path:
        """The checkpoint of a tiny finished training run (made once, on first use)."""
        if self._checkpoint is None:
            from imperiale_train.config import make_config
            from imperiale_train.run import train

            run_dir = self.root / "base_run"
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                train(make_config(None, [*TINY_TRAIN, f"run_dir={run_dir}"]))
            self._checkpoint = run_dir / "checkpoint.pt"
        return self._checkpoint

    def run_copy(self, mutate: Callable[[pathlib.Path], None] | None = None, *, moved: bool = False) -> str:
        """A copy of the tiny run's folder, its checkpoint changed by ``mutate``. Unless ``moved``, the
        copy's stored ``run_dir`` is set to the copy, so that resuming it reaches the changed part."""
        import torch

        src = self.checkpoint().parent
        dst = self.path("run_copy")
        shutil.copytree(src, dst)
        if not moved:
            data = torch.load(dst / "checkpoint.pt", weights_only=False)
            data["config"]["run_dir"] = str(dst)
            torch.save(data, dst / "checkpoint.pt")
        if mutate is not None:
            mutate(dst / "checkpoint.pt")
        return str(dst)


class _Touch:
    """A pickle that creates a file when it is loaded: the harmless stand-in for code in a checkpoint."""

    def __init__(self, path: pathlib.Path):
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


# ---------------------------------------------------------------------------------------- the cases

ILLEGAL = object()  # stands for "an action the mask forbids"
JSON_JUNK: dict[str, Any] = {"null": None, "true": True, "float": 2.5, "negative": -1, "huge": 10**30,
                             "string": "x", "empty list": [], "empty object": {}, "nested": [[[]]]}


def _cli(area: str, name: str, argv: list[str], **kw: Any) -> Case:
    return Case(area, name, argv=[str(a) for a in argv], **kw)


def _call(area: str, name: str, fn: Callable[[], Any], **kw: Any) -> Case:
    return Case(area, name, fn=fn, **kw)


def _sub(area: str, name: str, args: list[str], **kw: Any) -> Case:
    return Case(area, name, command=[sys.executable, "-m", "imperiale_cli", *map(str, args)], fast=False, **kw)


def _sub_code(area: str, name: str, code: str, **kw: Any) -> Case:
    return Case(area, name, command=[sys.executable, "-c", code], fast=False, **kw)


def record_cases(s: Scratch) -> list[Case]:
    area = "replay/records"
    cases: list[Case] = []
    valid_text = json.dumps(s.record)

    def replay(name: str, path: Any, **kw: Any) -> None:
        cases.append(_cli(area, name, ["replay", path], **kw))

    replay("valid record", s.record_file, expect="ok")
    replay("missing file", s.missing, expect="error")
    replay("empty path", "", expect="error")
    replay("a directory", s.dir, expect="error")
    replay("a FIFO", s.fifo, expect="error", fast=False)
    replay("empty file", s.write("empty.json", ""), expect="error")
    replay("whitespace only", s.write("blank.json", "  \n\n"), expect="error")
    replay("non-UTF-8 (latin-1)", s.write("latin1.json", valid_text.replace('"academie"', '"acad\u00e9mie"')
                                          .encode("latin-1")), expect="error")
    replay("UTF-16 with BOM", s.write("utf16.json", valid_text.encode("utf-16")), expect="error")
    replay("UTF-8 with BOM", s.write("bom.json", b"\xef\xbb\xbf" + valid_text.encode()), expect="either")
    replay("binary bytes", s.write("binary.json", bytes(range(256)) * 8), expect="error")
    replay("NUL bytes", s.write("nul.json", b"\x00" * 100), expect="error")
    replay("deeply nested JSON", s.write("deep.json", "[" * 100_000 + "]" * 100_000), expect="error")
    replay("deeply nested object", s.write("deep_obj.json", '{"a":' * 50_000 + "1" + "}" * 50_000), expect="error")
    replay("truncated JSON", s.write("trunc.json", valid_text[: len(valid_text) // 2]), expect="error")
    replay("JSON array at top", s.write("array.json", "[" + valid_text + "]"), expect="error")
    replay("JSON string at top", s.write("string.json", '"record"'), expect="error")
    replay("JSON null", s.write("null.json", "null"), expect="error")
    replay("NaN literal", s.write("nan.json", valid_text.replace('"players": 2', '"players": NaN')), expect="error")
    replay("Infinity literal", s.write("inf.json", valid_text.replace('"players": 2', '"players": Infinity')),
           expect="error")
    replay("huge integer", s.write("bigint.json", valid_text.replace('"players": 2', '"players": ' + "9" * 5000)),
           expect="error")
    replay("duplicate key", s.write("dup.json", valid_text.replace('"players": 2', '"players": 3, "players": 2')),
           expect="error")
    replay("wrong suffix .txt", s.write("record.txt", valid_text), expect="error")
    replay("no suffix", s.write("record", valid_text), expect="error")
    replay("upper-case suffix .JSON", s.write("record.JSON", valid_text), expect="either")
    replay("two objects in a .json", s.write("two.json", valid_text + valid_text), expect="error")
    replay("jsonl with a bad line", s.write("bad.jsonl", valid_text + "\n{oops\n"), expect="error")
    replay("jsonl with only blank lines", s.write("blank.jsonl", "\n\n"), expect="either")
    replay("jsonl, a record split over lines", s.write("split.jsonl", json.dumps(s.record, indent=1)),
           expect="error")
    replay("path with a NUL byte", "bad\x00name.json", expect="error")
    replay("very long path", "x" * 5000 + ".json", expect="error")
    loop = s.path("loop.json")
    loop.symlink_to(loop)
    replay("symlink loop", loop, expect="error")
    dangling = s.path("dangling.json")
    dangling.symlink_to(s.root / "nowhere.json")
    replay("dangling symlink", dangling, expect="error")
    unreadable = s.write("unreadable.json", valid_text)
    unreadable.chmod(0)
    replay("unreadable file" + (" (running as root: readable)" if os.geteuid() == 0 else ""), unreadable,
           expect="either" if os.geteuid() == 0 else "error")
    cases.append(_cli(area, "--indent -5", ["replay", s.record_file, "--indent", "-5"]))
    cases.append(_cli(area, "--indent abc", ["replay", s.record_file, "--indent", "abc"], expect="error"))
    many = s.write("many.jsonl", (valid_text + "\n") * 200)
    cases.append(Case(area, "replay | head (broken pipe)", fast=False, expect="either",
                      command=["sh", "-c", f"{sys.executable} -m imperiale_cli replay {many} | head -c 100"]))

    # Field-level mutations of a valid record, through the library.
    from imperiale_env.records.game_records import game_from_record

    def mutated(name: str, change: Callable[[dict], None], expect: str = "error") -> None:
        record = copy.deepcopy(s.record)
        change(record)
        cases.append(_call(area, name, lambda r=record: game_from_record(r), expect=expect))

    def put(path: tuple, value: Any) -> Callable[[dict], None]:
        def change(r: dict) -> None:
            target = r
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        return change

    def drop(path: tuple) -> Callable[[dict], None]:
        def change(r: dict) -> None:
            target = r
            for key in path[:-1]:
                target = target[key]
            del target[path[-1]]
        return change

    fields = [("format",), ("rules",), ("players",), ("start",), ("deals",), ("start", "dealer"),
              ("start", "imperiales"), ("start", "points"), ("deals", 0, "dealer"), ("deals", 0, "hands"),
              ("deals", 0, "turned"), ("deals", 0, "talon"), ("deals", 0, "actions"),
              ("deals", 0, "actions", 0, "player"), ("deals", 0, "actions", 0, "act")]
    for path in fields:
        label = ".".join(map(str, path))
        mutated(f"{label} missing", drop(path))
        for junk in ("null", "string", "float", "nested"):
            mutated(f"{label} = {junk}", put(path, JSON_JUNK[junk]))
    mutated("format version 2", put(("format",), "imperiale-record/2"))
    mutated("rules preset unknown", put(("rules", "preset"), "nope"))
    mutated("rules as a preset string", put(("rules",), "academie"))
    mutated("rules unknown field", put(("rules", "colour"), "red"))
    mutated("rules field bad value", put(("rules", "target_imperiales"), 0))
    mutated("rules field float", put(("rules", "target_imperiales"), 5.0))
    mutated("players 4", put(("players",), 4))
    mutated("players 3 with two-player rules", put(("players",), 3))
    mutated("players true", put(("players",), True))
    mutated("players 2.0", put(("players",), 2.0))
    mutated("start.dealer 2", put(("start", "dealer"), 2))
    mutated("start.points 24", put(("start", "points"), [24, 0]))
    mutated("start.points negative", put(("start", "points"), [-4, 0]))
    mutated("start.imperiales at the target", put(("start", "imperiales"), [5, 0]))
    mutated("start.imperiales three seats", put(("start", "imperiales"), [0, 0, 0]))
    mutated("deal dealer out of rotation", put(("deals", 0, "dealer"), 1 - s.record["deals"][0]["dealer"]))
    mutated("card in lower case", lambda r: r["deals"][0]["hands"][0].__setitem__(0, r["deals"][0]["hands"][0][0]
                                                                                   .lower()))
    mutated("card 1H", lambda r: r["deals"][0]["hands"][0].__setitem__(0, "1H"))
    mutated("card 11S", lambda r: r["deals"][0]["hands"][0].__setitem__(0, "11S"))
    mutated("a six with two players", lambda r: r["deals"][0]["hands"][0].__setitem__(0, "6H"))
    mutated("card as an integer", lambda r: r["deals"][0]["hands"][0].__setitem__(0, 3))
    mutated("card twice", lambda r: r["deals"][0]["hands"][0].__setitem__(0, r["deals"][0]["hands"][1][0]))
    mutated("hand of 11 cards", lambda r: r["deals"][0]["hands"][0].pop())
    mutated("talon of 6 cards", lambda r: r["deals"][0]["talon"].pop())
    mutated("turned card also in a hand", put(("deals", 0, "turned"), s.record["deals"][0]["hands"][0][0]))
    mutated("action by the wrong player", lambda r: r["deals"][0]["actions"][0].__setitem__(
        "player", 1 - r["deals"][0]["actions"][0]["player"]))
    mutated("action player 7", put(("deals", 0, "actions", 0, "player"), 7))
    mutated("act unknown", put(("deals", 0, "actions", 0, "act"), "pass"))
    mutated("illegal card played", lambda r: _illegal_play(r))
    mutated("point suit X", lambda r: _first_point(r).__setitem__("suit", "X"))
    mutated("point with an extra key", lambda r: _first_point(r).__setitem__("card", "KH"))
    mutated("actions after the deal ended", lambda r: r["deals"][0]["actions"].append(
        {"player": 0, "act": "play", "card": "KH"}))
    mutated("an unfinished deal before another", lambda r: r["deals"].insert(0, _unfinished(r["deals"][0], r)))
    mutated("unknown key in a deal", put(("deals", 0, "note"), "x"))
    mutated("unknown top-level key", put(("note",), "x"))
    mutated("no deals (valid: nothing played)", put(("deals",), []), expect="ok")
    mutated("last deal cut short (valid: unfinished)", lambda r: r["deals"][0]["actions"].__delitem__(
        slice(5, None)), expect="ok")
    return cases


def _first_point(record: dict) -> dict:
    return next(a for a in record["deals"][0]["actions"] if a["act"] in ("point", "sink"))


def _illegal_play(record: dict) -> None:
    deal = record["deals"][0]
    i = next(i for i, a in enumerate(deal["actions"]) if a["act"] == "play")
    player = deal["actions"][i]["player"]
    other = deal["hands"][1 - player][0]
    deal["actions"][i]["card"] = other


def _unfinished(deal: dict, record: dict) -> dict:
    first = copy.deepcopy(deal)
    first["actions"] = first["actions"][:3]
    return first


def play_cases(s: Scratch) -> list[Case]:
    area = "play"
    quit_ = "quit\n\n"
    cases: list[Case] = []

    def play(name: str, args: list[Any], stdin: str = quit_, **kw: Any) -> None:
        cases.append(_cli(area, name, ["play", "--opponent", "random", *args], stdin=stdin, **kw))

    play("quit at once (valid)", ["--seed", 1], expect="ok")
    play("end of input at once (valid)", ["--seed", 1], stdin="", expect="either")
    for seed in (-1, 2**63, 2**64, 10**30):
        play(f"--seed {seed}", ["--seed", seed], expect="error")
    for seed in ("abc", "1.5", "", "0x10"):
        play(f"--seed {seed!r}", ["--seed", seed], expect="error")
    for seat in (-1, 2, 5, "x"):
        play(f"--seat {seat}", ["--seat", seat], expect="error")
    play("--seat 2 with three players (valid)", ["--seat", 2, "--rules", "academie3", "--seed", 1], expect="ok")
    for rules in ("nope", "", "ACADEMIE", "academie "):
        play(f"--rules {rules!r}", ["--rules", rules], expect="error")
    for opponent in ("nope", "", "random:3", "heuristic:7", "pimc:abc", "pimc:0", "pimc:-2", "neural:",
                     f"neural:{s.missing}", f"neural:{s.dir}", f"neural:{s.record_file}", "human:1"):
        cases.append(_cli(area, f"--opponent {opponent!r}", ["play", "--opponent", opponent, "--seed", 1],
                          stdin=quit_, expect="error"))
    # --save: the path is checked before the game, and an existing record is never lost.
    play("--save into a missing folder", ["--seed", 1, "--save", s.missing], expect="error")
    play("--save .txt", ["--seed", 1, "--save", s.path("game.txt")], expect="error")
    play("--save a directory", ["--seed", 1, "--save", s.dir], expect="error")
    play("--save empty path", ["--seed", 1, "--save", ""], expect="error")
    existing = s.write("existing.json", json.dumps(s.record))
    play("--save over an existing .json, then quit", ["--seed", 1, "--save", existing],
         check=_unchanged_or_kept(existing), expect="either")
    jsonl = s.write("existing.jsonl", json.dumps(s.record) + "\n")
    play("--save appends to an existing .jsonl", ["--seed", 1, "--save", jsonl], check=_unchanged_or_kept(jsonl),
         expect="either")
    bad_jsonl = s.write("bad.jsonl", json.dumps(s.record) + "\n{oops\n")
    play("--save to a .jsonl with a bad line", ["--seed", 1, "--save", bad_jsonl], check=_unchanged_or_kept(bad_jsonl),
         expect="error")
    play("--save to a FIFO", ["--seed", 1, "--save", s.fifo], expect="error")
    play("--save to /proc", ["--seed", 1, "--save", "/proc/imperiale.json"], expect="error")
    for text in ("\x00\x01\x02\n", "é" * 1000 + "\n", "x" * 100_000 + "\n", "99999999999999999999\n", "-1\n",
                 "point\n", "point z\n", "show show\n", "\n" * 50, "10\n" * 3):
        play(f"typed {text[:12]!r}", ["--seed", 1], stdin=text + quit_, expect="either")
    return cases


def _unchanged_or_kept(path: pathlib.Path) -> Callable[[], str | None]:
    """After the case: every record the file held before is still there (overwriting one is data loss)."""
    before = path.read_text()
    lines = [line for line in before.splitlines() if line.strip()]

    def check() -> str | None:
        if not path.exists():
            return "the existing record file was deleted"
        after = path.read_text()
        if after == before:
            return None
        if path.suffix == ".jsonl" and after.startswith(before if before.endswith("\n") else before + "\n"):
            return None
        if path.suffix == ".json" and lines:
            return "DATA LOST: the existing record was overwritten"
        return "DATA LOST: the existing lines were changed"
    return check


def eval_cases(s: Scratch) -> list[Case]:
    area = "eval"
    base = ["eval", "--no-progress", "--agents", "random,random", "--deals", 2]
    cases: list[Case] = [_cli(area, "one duplicate deal (valid)", base, expect="ok")]
    for n in (0, -1):
        cases.append(_cli(area, f"--games {n}", ["eval", "--no-progress", "--games", n], expect="error"))
        cases.append(_cli(area, f"--deals {n}", ["eval", "--no-progress", "--deals", n], expect="error"))
    cases.append(_cli(area, "--games 1 (one pair: intervals undefined)",
                      ["eval", "--no-progress", "--agents", "random,random", "--games", 1, "--target", 1]))
    cases.append(_cli(area, "--games and --deals", [*base, "--games", 1], expect="error"))
    for text in ("abc", "1.5", "", "1e3"):
        cases.append(_cli(area, f"--deals {text!r}", ["eval", "--deals", text], expect="error"))
    for agents in ("", "random", "random,", "random,nope", "random,random:3", "random,heuristic:7",
                   "random,pimc:abc", "random,pimc:0", "random,pimc:1:0", "random,pimc:1:13", "random,pimc:1:2:3",
                   f"random,neural:{s.missing}", f"random,neural:{s.dir}", "random,neural:", "random,human",
                   "random,,heuristic", " , "):
        cases.append(_cli(area, f"--agents {agents!r}", ["eval", "--no-progress", "--deals", 1, "--agents", agents],
                          expect="error"))
    for workers in (0, -1, "x"):
        cases.append(_cli(area, f"--workers {workers}", [*base, "--workers", workers], expect="error"))
    for target in (0, -1, "x"):
        cases.append(_cli(area, f"--target {target}", [*base, "--target", target], expect="error"))
    for seed in (-1, 2**63, 2**64):
        cases.append(_cli(area, f"--seed {seed}", [*base, "--seed", seed], expect="error"))
    for rules in ("nope", ""):
        cases.append(_cli(area, f"--rules {rules!r}", [*base, "--rules", rules], expect="error"))
    for out, label in ((s.missing.parent / "sub" / "out", "under a missing folder (valid: made)"),
                       (s.record_file, "an existing file"), ("", "empty"), ("/proc/imperiale_out", "not writable")):
        cases.append(_cli(area, f"--out {label}", [*base, "--out", out],
                          expect="either" if "valid" in label else "error"))
    cases.append(_sub(area, "--target 1000000", ["eval", "--no-progress", "--agents", "random,random", "--games", 1,
                                                 "--target", 1_000_000], expect="error"))
    cases.append(_sub(area, "--games 10**9", ["eval", "--no-progress", "--agents", "random,random", "--games",
                                              10**9], expect="error"))
    return cases


def train_cases(s: Scratch) -> list[Case]:
    area = "train config"
    cases: list[Case] = []

    def train(name: str, overrides: list[Any], *, extra: list[str] = (), expect: str = "error", fast: bool = True,
              run_dir: str | None = None, **kw: Any) -> None:
        rd = [] if run_dir == "" or any(str(o).startswith("run_dir=") for o in overrides) else \
            [f"run_dir={run_dir or s.run_dir()}"]
        argv = ["train", *extra, *TINY_TRAIN, *rd, *map(str, overrides)]
        cases.append(Case(area, name, argv=argv, expect=expect, fast=fast, **kw))

    train("tiny run (valid)", [], expect="ok", fast=False)
    for item in ("lr", "=3", "nope=1", "LR=0.1", " =1"):
        train(f"override {item!r}", [item])
    # Spaces around '=' in one argument are read as YAML would read them: a valid override.
    train("override 'lr = 0.1'", ["lr = 0.1"], expect="either")
    for key, values in {
        "lr": ("abc", "inf", "nan", "-1", "0", ""),
        "ent_coef": ("inf", "nan", "-1"),
        "vf_coef": ("inf", "nan"),
        "gamma": ("2", "-0.1", "nan"),
        "gae_lambda": ("1.5",),
        "clip_coef": ("0", "inf"),
        "max_grad_norm": ("nan",),
        "reward_scale": ("inf", "0"),
        "target_kl": ("nan",),
        "p_pool": ("1.5", "nan"),
        "num_envs": ("0", "-1", "1.5", "x"),
        "num_steps": ("0",),
        "iterations": ("0", "1.5", "-3"),
        "update_epochs": ("0",),
        "num_minibatches": ("0", "100000"),
        "hidden": ("", "a,b", "0", "8,-1", "8,,8"),
        "seed": ("-1", str(2**63), str(2**64), "abc", "1.5"),
        "eval_seed": ("-1", str(2**64)),
        "target_imperiales": ("-1", "x"),
        "eval_opponents": ("pimc:abc", f"neural:{s.missing}", "nope", "", "random:3", "heuristic:7"),
        "device": ("tpu", ""),
        "threads": ("0", "-1"),
        "progress": ("maybe", "2"),
        "rules": ("nope", ""),
        "critic": ("omniscient",),
        "activation": ("gelu",),
        "checkpoint_every": ("-1",),
        "eval_every": ("-1",),
        "pool_size": ("0",),
        "eval_groups": ("0",),
    }.items():
        for value in values:
            train(f"{key}={value!r}", [f"{key}={value}"])
    train("device=cuda without a GPU" if not _cuda() else "device=cuda (a GPU is present)", ["device=cuda"],
          expect="error" if not _cuda() else "ok", fast=False)
    train("run_dir= (empty)", ["run_dir="], run_dir="")
    train("run_dir= an existing file", [f"run_dir={s.record_file}"])
    train("run_dir= under /proc", ["run_dir=/proc/imperiale_run"])
    train("run_dir= a FIFO", [f"run_dir={s.fifo}"])
    # configuration files
    for name, data in (("binary", bytes(range(256)) * 4), ("utf-16", "lr: 0.1\n".encode("utf-16")),
                       ("a list", "- lr\n- 0.1\n"), ("a scalar", "42\n"), ("unknown key", "colour: red\n"),
                       ("python tag", "lr: !!python/object/apply:os.system ['true']\n"),
                       ("bad YAML", "lr: [0.1\n"), ("nested value", "lr: {a: 1}\n"),
                       ("deep nesting", "a: " + "[" * 10_000 + "]" * 10_000 + "\n"),
                       ("tab indentation", "lr:\n\t0.1\n")):
        train(f"--config {name}", [], extra=["--config", str(s.write(f"config_{len(cases)}.yaml", data))])
    train("--config empty file (valid)", [], extra=["--config", str(s.write("empty.yaml", ""))], expect="ok",
          fast=False)
    train("--config missing", [], extra=["--config", str(s.missing)])
    train("--config a directory", [], extra=["--config", str(s.dir)])
    train("--config a FIFO", [], extra=["--config", str(s.fifo)])
    train("--config empty path", [], extra=["--config", ""])
    # values that would allocate or run without bound: in a subprocess with a memory cap
    for name, override in (("num_envs=100000000", "num_envs=100000000"), ("hidden=100000,100000",
                                                                          "hidden=100000,100000"),
                           ("target_imperiales=1000000", "target_imperiales=1000000"),
                           ("num_steps=10**9", "num_steps=1000000000")):
        cases.append(_sub(area, name, ["train", *TINY_TRAIN, f"run_dir={s.run_dir()}", "single_deal=false",
                                       override], expect="error"))
    return cases


def _cuda() -> bool:
    with contextlib.suppress(ImportError):
        import torch

        return bool(torch.cuda.is_available())
    return False


def checkpoint_cases(s: Scratch) -> list[Case]:
    """Resume and neural: with damaged, foreign and malicious checkpoints (each on a copy of a tiny run)."""
    import torch

    area = "train checkpoints"
    cases: list[Case] = []

    def resume(name: str, mutate: Callable[[pathlib.Path], None] | None, overrides: tuple[str, ...] = (),
               expect: str = "error", check: Callable[[], str | None] | None = None) -> None:
        run_dir = s.run_copy(mutate)
        cases.append(Case(area, name, argv=["train", "--resume", *TINY_TRAIN, f"run_dir={run_dir}", *overrides],
                          expect=expect, check=check, fast=False))

    def write(data: bytes) -> Callable[[pathlib.Path], None]:
        return lambda p: p.write_bytes(data)

    def edit(change: Callable[[dict], None]) -> Callable[[pathlib.Path], None]:
        def mutate(p: pathlib.Path) -> None:
            data = torch.load(p, weights_only=False)
            change(data)
            torch.save(data, p)
        return mutate

    marker = s.root / "CODE_RAN"

    def ran_code() -> str | None:
        if marker.exists():
            marker.unlink()
            return "RAN CODE FROM THE CHECKPOINT"
        return None

    resume("resume a finished run", None, expect="either")
    resume("resume with iterations=2 (valid: extends)", None, ("iterations=2",), expect="ok")
    resume("resume with a changed lr", None, ("lr=0.5",))
    resume("resume with no checkpoint", lambda p: p.unlink())
    resume("checkpoint is garbage", write(os.urandom(4096)))
    resume("checkpoint is empty", write(b""))
    resume("checkpoint truncated", lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]))
    resume("checkpoint is a directory", lambda p: (p.unlink(), p.mkdir()))
    resume("checkpoint is a JSON file", write(json.dumps(s.record).encode()))
    resume("checkpoint is a plain pickle that runs code", write(pickle.dumps(_Touch(marker))), check=ran_code)
    resume("checkpoint with code in the game batch", edit(lambda d: d.__setitem__("rollout", pickle.dumps(
        _Touch(marker)))), check=ran_code)
    resume("checkpoint iteration=999", edit(lambda d: d.__setitem__("iteration", 999)), expect="either")
    resume("checkpoint iteration=-5", edit(lambda d: d.__setitem__("iteration", -5)))
    resume("checkpoint without model", edit(lambda d: d.pop("model")))
    resume("checkpoint with foreign format", edit(lambda d: d.__setitem__("format", "other")))
    resume("checkpoint version 99", edit(lambda d: d.__setitem__("version", 99)))
    resume("checkpoint obs_size 7", edit(lambda d: d.__setitem__("obs_size", 7)))
    resume("checkpoint config with unknown key", edit(lambda d: d["config"].__setitem__("colour", "red")))
    resume("checkpoint config with a bad value", edit(lambda d: d["config"].__setitem__("lr", -1.0)))
    resume("checkpoint with wrong weight shapes", edit(lambda d: d.__setitem__(
        "model", {k: v[..., :1] for k, v in d["model"].items()})))
    resume("checkpoint with NaN weights", edit(lambda d: d.__setitem__(
        "model", {k: torch.full_like(v, float("nan")) for k, v in d["model"].items()})))
    resume("checkpoint np_rng garbage", edit(lambda d: d.__setitem__("np_rng", {"state": 1})))
    resume("checkpoint rollout garbage bytes", edit(lambda d: d.__setitem__("rollout", b"\x80\x05garbage")))
    moved = s.run_copy(moved=True)
    cases.append(Case(area, "resume a copied run with iterations=2 (valid)",
                      argv=["train", "--resume", f"run_dir={moved}", "iterations=2"], expect="ok", fast=False))
    # The same files as neural: agents.
    good = s.checkpoint()
    for name, path in (("valid checkpoint", good), ("garbage", s.write("garbage.pt", os.urandom(2048))),
                       ("plain pickle that runs code", s.write("evil.pt", pickle.dumps(_Touch(marker)))),
                       ("a record file", s.record_file), ("a directory", s.dir), ("a FIFO", s.fifo)):
        cases.append(Case(area, f"eval neural: {name}", argv=["eval", "--no-progress", "--deals", "2", "--agents",
                                                              f"random,neural:{path}"],
                          expect="ok" if name.startswith("valid") else "error", check=ran_code, fast=False))
    return cases


def bench_cases(s: Scratch) -> list[Case]:
    area = "bench"
    quick = ["bench", "--batch-sizes", "1"]
    # valid, and about 30 s however short the measurements: it times a cold start (compiling) in a new process
    cases = [_cli(area, "--seconds 0.05 (valid)", [*quick, "--seconds", 0.05], expect="ok", fast=False, timeout=120)]
    for seconds in ("0", "-1", "abc", "", "1e-300"):
        cases.append(_cli(area, f"--seconds {seconds!r}", [*quick, "--seconds", seconds],
                          expect="error"))
    for seconds in ("nan", "inf", "-inf", "1e308"):
        cases.append(_sub(area, f"--seconds {seconds}", [*quick, "--seconds", seconds], expect="error"))
    for sizes in ("0", "-1", "abc", "", "1,,2", "1.5"):
        cases.append(_cli(area, f"--batch-sizes {sizes!r}", ["bench", "--seconds", 0.05, "--batch-sizes", sizes],
                          expect="error"))
    cases.append(_sub(area, "--batch-sizes 10**9", ["bench", "--seconds", 0.05, "--batch-sizes", 10**9],
                      expect="error"))
    for rules in ("nope", "", "academie3 "):
        cases.append(_cli(area, f"--rules {rules!r}", [*quick, "--seconds", 0.05, "--rules", rules], expect="error"))
    return cases


def rules_cases(s: Scratch) -> list[Case]:
    from dataclasses import fields as dc_fields

    from imperiale_env.core.rules import Rules, make_rules

    area = "rules fields"
    cases: list[Case] = []

    def rules(name: str, expect: str = "error", preset: Any = "academie", **overrides: Any) -> None:
        cases.append(_call(area, name, lambda: make_rules(preset, **overrides), expect=expect))

    for preset in ("nope", None, 3, "", "Academie"):
        rules(f"preset {preset!r}", preset=preset)
    rules("unknown field", colour="red")
    for f in dc_fields(Rules):
        if f.name == "preset":
            continue
        kind = f.type
        if kind == "int":
            for label, value in (("a string", "4"), ("a float", 4.0), ("a bool", True), ("None", None),
                                 ("negative", -1), ("10**12", 10**12), ("numpy int", np.int64(4))):
                rules(f"{f.name} {label}", expect="either" if label == "numpy int" else "error", **{f.name: value})
        elif kind == "bool":
            for label, value in (("an int", 1), ("a string", "true"), ("None", None)):
                rules(f"{f.name} {label}", **{f.name: value})
        elif kind == "str":
            for label, value in (("unknown", "nope"), ("upper case", str(getattr(Rules(), f.name)).upper()),
                                 ("an int", 1)):
                rules(f"{f.name} {label}", **{f.name: value})
        else:
            for label, value in (("unknown rank", ("Z",)), ("a rank twice", ("K", "K")),
                                 ("the 6 (two players)", ("6",)),
                                 ("a string", "KQJ"), ("ints", (1, 2)), ("7 and low", ("7", "low"))):
                rules(f"{f.name} {label}", **{f.name: value})
    rules("trick_quota 13", trick_quota=13)
    rules("target 10**15 with a turned honour worth 10**12", target_imperiales=10**15, turned_honour_points=10**12)
    rules("three players with the turned-card impériale", players=3, turned_imperiale=True)
    rules("carte blanche worth both", carte_blanche_imperiales=1, carte_blanche_points=4)
    rules("Foster timing under the Académie chronology", declaration_timing="dealer_after_first_lead")
    rules("comparison by number without points", comparison="number")
    cases.append(_sub_code(area, "a game with target 10**15 and turned honour 10**12", (
        "from imperiale_env.core.rules import make_rules\nfrom imperiale_env.reference.game import Game\n"
        "g = Game(make_rules(target_imperiales=10**15, turned_honour_points=10**12), 0)\n"
        "while g.decision is not None:\n    g.step(g.legal_actions()[0])\nprint('played to the end')"),
        expect="error"))
    from imperiale_env.core.rules import resolve_rules

    for label, value in (("a list", ["academie"]), ("an int", 5), ("a dict without preset", {"players": 2}),
                         ("a dict with a bad field", {"preset": "academie", "x": 1})):
        cases.append(_call(area, f"rules= {label}", lambda v=value: resolve_rules(v), expect="error"))
    return cases


def aec_cases(s: Scratch) -> list[Case]:
    import imperiale_env

    area = "AEC env"
    cases: list[Case] = []

    def step(name: str, action: Any, expect: str = "error") -> None:
        def run() -> Any:
            env = imperiale_env.env()
            env.reset(seed=0)
            agent = env.agent_selection
            env.step(action)
            if env.terminations.get(agent) and env.rewards.get(agent) == -1:
                return Refused("the game ended with reward -1 for the illegal action")
            return f"accepted, next agent {env.agent_selection}"
        cases.append(_call(area, name, run, expect=expect))

    for label, action in (("43", 43), ("-1", -1), ("None", None), ("NaN", float("nan")), ("'38'", "38"),
                          ("True", True), ("38.7", 38.7), ("10**20", 10**20), ("numpy 99", np.int64(99)),
                          ("a list", [38]), ("an array", np.array([38])), ("an illegal card", ILLEGAL)):
        if action is ILLEGAL:
            def run() -> Any:
                env = imperiale_env.env()
                env.reset(seed=0)
                agent = env.agent_selection
                mask = env.observe(agent)["action_mask"]
                env.step(int(np.flatnonzero(mask == 0)[0]))
                if env.terminations.get(agent) and env.rewards.get(agent) == -1:
                    return Refused("the game ended with reward -1 for the illegal action")
                return "accepted"
            cases.append(_call(area, "an illegal card (in range)", run, expect="error"))
            continue
        step(f"step({label})", action)

    def seeded(seed: Any) -> Callable[[], Any]:
        return lambda: imperiale_env.env().reset(seed=seed)

    for seed in (-1, 2**64, "a", 1.5, 10**30):
        cases.append(_call(area, f"reset(seed={seed!r})", seeded(seed), expect="error"))
    for label, kwargs in (("rules='nope'", {"rules": "nope"}), ("rules=123", {"rules": 123}),
                          ("episode='x'", {"episode": "x"}), ("render_mode='nope'", {"render_mode": "nope"}),
                          ("start without episode='deal'", {"start": {"imperiales": [0, 0], "points": [0, 0]}}),
                          ("episode='deal', start points 30", {"episode": "deal", "start": {"imperiales": [0, 0],
                                                                                            "points": [30, 0]}}),
                          ("episode='deal', start a list", {"episode": "deal", "start": [0, 0]}),
                          ("episode='deal', start dealer 5", {"episode": "deal", "start": {
                              "imperiales": [0, 0], "points": [0, 0], "dealer": 5}}),
                          ("an unknown argument", {"colour": "red"})):
        cases.append(_call(area, label, lambda k=kwargs: imperiale_env.env(**k).reset(seed=0), expect="error"))

    def before_reset(what: str) -> Callable[[], Any]:
        def run() -> Any:
            env = imperiale_env.env()
            if what == "observe":
                return env.observe("player_0")
            if what == "step":
                return env.step(0)
            return env.last()
        return run

    for what in ("observe", "step", "last"):
        cases.append(_call(area, f"{what} before reset", before_reset(what), expect="error"))

    def after_end() -> Any:
        env = imperiale_env.env()
        env.reset(seed=0)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        env.step(0)
    # PettingZoo's own convention: a step after every agent is done is warned about, not raised.
    cases.append(_call(area, "step after the game ended", after_end, expect="either"))
    return cases


def gym_cases(s: Scratch) -> list[Case]:
    import gymnasium

    import imperiale_env  # noqa: F401  (registers the environments)

    area = "Gymnasium env"
    cases: list[Case] = []

    def step(name: str, action: Any, expect: str = "error") -> None:
        def run() -> Any:
            env = gymnasium.make("Imperiale-v1")
            env.reset(seed=0)
            _, reward, terminated, _, info = env.step(action)
            if info.get("illegal_action"):
                return Refused(f"episode ended as illegal, reward {reward}")
            return f"accepted, reward {reward}, terminated {terminated}"
        cases.append(_call(area, name, run, expect=expect))

    for label, action in (("38.7", 38.7), ("'38'", "38"), ("-1", -1), ("43", 43), ("None", None),
                          ("NaN", float("nan")), ("True", True), ("10**20", 10**20), ("an array of two",
                                                                                      np.array([38, 39])),
                          ("a list", [38]), ("numpy float 38.0", np.float64(38.0)), ("a string 'KH'", "KH")):
        step(f"step({label})", action)

    def run_with(kwargs: dict[str, Any], reset: dict[str, Any] | None = None) -> Callable[[], Any]:
        def run() -> Any:
            env = gymnasium.make("Imperiale-v1", **kwargs)
            env.reset(**(reset or {"seed": 0}))
            return "made and reset"
        return run

    for seed in (-1, 2**64, "a", 1.5):
        cases.append(_call(area, f"reset(seed={seed!r})", run_with({}, {"seed": seed}), expect="error"))
    for label, kwargs in (("rules='nope'", {"rules": "nope"}), ("seat=5", {"seat": 5}), ("seat='x'", {"seat": "x"}),
                          ("seat=-1", {"seat": -1}), ("opponent='pimc:abc' (a bad spec)", {"opponent": "pimc:abc"}),
                          ("opponent=42", {"opponent": 42}), ("episode='x'", {"episode": "x"}),
                          ("render_mode='nope'", {"render_mode": "nope"})):
        cases.append(_call(area, label, run_with(kwargs), expect="error"))
    cases.append(_call(area, "reset(options={'start': 'bad'})",
                       run_with({"episode": "deal"}, {"seed": 0, "options": {"start": "bad"}}), expect="error"))
    # An unknown reset option is warned about, not refused: Gymnasium's vector envs and
    # PettingZoo's api_test pass options of their own (docs/rules.md, decisions).
    cases.append(_call(area, "reset(options={'colour': 1})", run_with({}, {"seed": 0, "options": {"colour": 1}}),
                       expect="either"))

    def illegal_opponent() -> Any:
        env = gymnasium.make("Imperiale-v1", opponent=lambda obs, mask: 99, seat=1)
        env.reset(seed=0)
        return "accepted"
    cases.append(_call(area, "an opponent that returns 99", illegal_opponent, expect="error"))

    def step_before_reset() -> Any:
        env = gymnasium.make("Imperiale-v1")
        return env.step(0)
    cases.append(_call(area, "step before reset", step_before_reset, expect="error"))
    return cases


def vector_cases(s: Scratch) -> list[Case]:
    import gymnasium

    import imperiale_env  # noqa: F401

    area = "vector env"
    cases: list[Case] = []
    for n in (0, -1, 2.5, "4", None):
        cases.append(_call(area, f"num_envs={n!r}", lambda n=n: gymnasium.make_vec("ImperialeSelfPlay-v1",
                                                                                    num_envs=n).reset(seed=0),
                           expect="error"))

    def stepped(actions: Any) -> Callable[[], Any]:
        def run() -> Any:
            env = gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=2)
            env.reset(seed=0)
            return env.step(actions)[1]
        return run

    for label, actions in (("one action for two envs", np.array([0])), ("actions 43", np.array([43, 43])),
                           ("actions -1", np.array([-1, -1])), ("float actions", np.array([38.5, 38.5])),
                           ("a string", "38"), ("None", None)):
        cases.append(_call(area, f"step({label})", stepped(actions), expect="error"))
    for seed in (-1, 2**64, "a"):
        cases.append(_call(area, f"reset(seed={seed!r})", lambda seed=seed: gymnasium.make_vec(
            "ImperialeSelfPlay-v1", num_envs=2).reset(seed=seed), expect="error"))
    for mode in ("sync", "async"):
        code = ("import gymnasium, imperiale_env\n"
                f"env = gymnasium.make_vec('Imperiale-v1', num_envs=4, vectorization_mode='{mode}')\n"
                "for seed in range(8):\n    env.reset(seed=seed)\n    env.step(env.action_space.sample())\n"
                "env.close()\nprint('ok')")
        cases.append(_sub_code(area, f"make_vec Imperiale-v1 {mode}, 8 seeds (valid)", code, expect="ok"))
    return cases


def batch_cases(s: Scratch) -> list[Case]:
    from imperiale_env.batch import BatchGame

    area = "BatchGame"
    cases: list[Case] = []
    for label, n in (("2.5", 2.5), ("0", 0), ("-1", -1), ("'4'", "4"), ("None", None), ("True", True)):
        cases.append(_call(area, f"num_games {label}", lambda n=n: BatchGame("academie", n).reset(0), expect="error"))
    cases.append(_sub_code(area, "num_games 10**12", "from imperiale_env.batch import BatchGame\n"
                                                     "BatchGame('academie', 10**12).reset(0)\nprint('made')",
                           expect="error"))
    for label, rules in (("rules 'nope'", "nope"), ("rules 42", 42)):
        cases.append(_call(area, label, lambda r=rules: BatchGame(r, 2), expect="error"))

    def reset_with(**kw: Any) -> Callable[[], Any]:
        return lambda: BatchGame("academie", 2).reset(**kw)

    for label, kw in (("seed -1", {"seed": -1}), ("seed 2**64", {"seed": 2**64}), ("seed 'a'", {"seed": "a"}),
                      ("seed 1.5", {"seed": 1.5}), ("three seeds for two games", {"seed": np.array([1, 2, 3])}),
                      ("negative seeds", {"seed": np.array([-1, -2])}), ("dealer 5", {"seed": 0, "dealer": 5}),
                      ("points 30", {"seed": 0, "points": np.array([30, 0])}),
                      ("imperiales at the target", {"seed": 0, "imperiales": np.array([5, 0])})):
        cases.append(_call(area, f"reset {label}", reset_with(**kw), expect="error"))

    def stepped(actions: Any) -> Callable[[], Any]:
        def run() -> Any:
            game = BatchGame("academie", 2)
            game.reset(0)
            return game.step(actions)
        return run

    for label, actions in (("one action for two games", np.array([0])), ("actions 43", np.array([43, 43])),
                           ("actions -1", np.array([-1, -1])), ("float actions", np.array([38.5, 38.5])),
                           ("illegal actions", ILLEGAL), ("a list of strings", ["38", "38"])):
        if actions is ILLEGAL:
            def run() -> Any:
                game = BatchGame("academie", 2)
                game.reset(0)
                mask = game.legal_action_mask()
                return game.step(np.array([int(np.flatnonzero(~row)[0]) for row in mask]))
            cases.append(_call(area, "step illegal actions", run, expect="error"))
            continue
        cases.append(_call(area, f"step {label}", stepped(actions), expect="error"))
    for what in ("observe", "legal_action_mask", "step"):
        def run(what: str = what) -> Any:
            game = BatchGame("academie", 2)
            return game.step(np.zeros(2, dtype=np.int64)) if what == "step" else getattr(game, what)()
        cases.append(_call(area, f"{what} before reset", run, expect="error"))
    return cases


def agent_cases(s: Scratch) -> list[Case]:
    from imperiale_agents.base import make_agent

    area = "agent specs"
    cases: list[Case] = []
    for spec in ("", " ", None, 123, "nope", "RANDOM", "random:3", "heuristic:7", "pimc:abc", "pimc:0", "pimc:-1",
                 "pimc:1:0", "pimc:1:13", "pimc:1:2:3", "pimc:1e9", "pimc:99999999999", "neural:",
                 f"neural:{s.missing}", f"neural:{s.dir}", f"neural:{s.record_file}", f"neural:{s.fifo}",
                 "human:1", "random,heuristic", "random "):
        expect = "either" if spec in ("random ",) else "error"
        cases.append(_call(area, f"make_agent({spec!r})", lambda spec=spec: make_agent(spec, "academie"),
                           expect=expect))
    for workers in (0, -1, 2.5):
        cases.append(_call(area, f"pimc workers={workers}", lambda w=workers: make_agent("pimc:2", "academie",
                                                                                         workers=w), expect="error"))
    cases.append(_call(area, "make_agent with rules 'nope'", lambda: make_agent("random", "nope"), expect="error"))
    return cases


#: A user's own agents that misbehave, one way each (tests/test_registry.py plays them too).
MISBEHAVING_AGENTS = """
import sys
import numpy as np

class Answers:
    ANSWER = None

    def __init__(self, rules):
        self.name = type(self).__name__

    def act(self, obs, mask, rng):
        return self.ANSWER(mask)

class Illegal(Answers):
    ANSWER = staticmethod(lambda mask: np.argmin(mask, axis=1))

class Floats(Answers):
    ANSWER = staticmethod(lambda mask: np.argmax(mask, axis=1) + 0.0)

class NaNs(Answers):
    ANSWER = staticmethod(lambda mask: np.full(len(mask), np.nan))

class Nothing(Answers):
    ANSWER = staticmethod(lambda mask: None)

class WrongShape(Answers):
    ANSWER = staticmethod(lambda mask: np.argmax(mask, axis=1)[:, None])

class Raises(Answers):
    ANSWER = staticmethod(lambda mask: {}["oops"])

class Exits(Answers):
    ANSWER = staticmethod(lambda mask: sys.exit(3))

class BadInit:
    def __init__(self, rules):
        raise RuntimeError("no model file")
"""


def hostile_cases(s: Scratch) -> list[Case]:
    """The second walk (issue 41): a user's agent that misbehaves, links in the records folder, the
    OpenSpiel game's chance nodes."""
    area = "hostile (issue 41)"
    cases: list[Case] = []
    bots = s.write("misbehaving_bots.py", MISBEHAVING_AGENTS)
    for cls in ("Illegal", "Floats", "NaNs", "Nothing", "WrongShape", "Raises", "Exits", "BadInit"):
        cases.append(_cli(area, f"eval with your agent {cls}", ["eval", "--no-progress", "--deals", "2", "--agents",
                                                                 f"{bots}:{cls},random"], expect="error"))
    broken = s.write("broken_import.py", "raise RuntimeError('missing weights')\n")
    cases.append(_cli(area, "eval with an agent whose file fails", ["eval", "--no-progress", "--deals", "2",
                                                                    "--agents", f"{broken}:Agent,random"],
                      expect="error"))

    def served_outside() -> None:
        from imperiale_web.app import create_app

        folder, outside = s.path("records_jail"), s.path("outside")
        folder.mkdir()
        outside.mkdir()
        (outside / "secret.json").write_text(json.dumps({"secret": 1}))
        (folder / "link.json").symlink_to(outside / "secret.json")
        client = create_app(folder).test_client()
        listed = client.get("/api/records").json["records"]
        answer = client.get("/api/records/link.json")
        if listed or answer.status_code != 404:
            raise AssertionError(f"the records folder served a link out of it: {listed}, {answer.status_code}")

    cases.append(_call(area, "serve --records with a link out of the folder", served_outside, expect="ok"))

    def chance(outcome: int) -> Callable[[], Any]:
        def deal() -> None:
            import pyspiel

            import imperiale_env.openspiel as ios

            state = pyspiel.load_game(ios.SHORT_NAME, {"episode": "deal"}).new_initial_state()
            state.apply_action(0)
            state.apply_action(5)
            state.apply_action(outcome)
        return deal

    cases.append(_call(area, "OpenSpiel: a card dealt twice", chance(5), expect="error"))
    cases.append(_call(area, "OpenSpiel: no such card", chance(99), expect="error"))
    return cases


# ---------------------------------------------------------------------------------------- faults (issue 26)

_DRIVER = '''
import os, signal, subprocess, sys, time, pathlib
def start(args, ready, env=None):
    proc = subprocess.Popen([sys.executable, "-m", "imperiale_cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and not ready():
        time.sleep(0.02)
    return proc
def verdict(ok, line, proc_err):
    if ok:
        print("error: " + line, file=sys.stderr)  # the command ended with its clear line, nothing lost
        sys.exit(2)
    print(proc_err[-2000:], file=sys.stderr)
    sys.exit(3)
'''


def _driver(area: str, name: str, body: str, **kw: Any) -> Case:
    """A subprocess that runs a command, hands it a fault and judges how it ended: ``clear`` when it
    ended with its clear line and lost nothing (exit 2, ``error: LINE``), else ``other`` (exit 3)."""
    return _sub_code(area, name, _DRIVER + body, **kw)


def _train_signal(sig: str, run_dir: str) -> str:
    args = ["train", *TINY_TRAIN[1:], "iterations=500", "checkpoint_every=3", f"run_dir={run_dir}"]
    return f'''
run = pathlib.Path({run_dir!r})
metrics = run / "metrics.jsonl"
proc = start({args!r}, lambda: metrics.exists() and metrics.read_text().count("\\n") >= 4)
os.kill(proc.pid, signal.{sig})
out, err = proc.communicate(timeout=60)
lines = metrics.read_text().count("\\n")
import torch
done = torch.load(run / "checkpoint.pt", weights_only=True)["iteration"]
verdict(proc.returncode == 130 and "--resume" in err and "Traceback" not in err and done >= lines - 1,
        f"{sig}: iteration {{done}} of {{lines}} saved; " + err.strip().splitlines()[-1], err)
'''


def signal_cases(s: Scratch) -> list[Case]:
    area = "faults: signals"
    cases = [_driver(area, f"{sig} to imperiale train", _train_signal(sig, s.run_dir())) for sig in ("SIGTERM",
                                                                                                      "SIGHUP")]
    run_dir = s.run_dir()
    args = ["train", *TINY_TRAIN[1:], "iterations=500", "checkpoint_every=1", f"run_dir={run_dir}"]
    cases.append(_driver(area, "a second train on a live run_dir", f'''
metrics = pathlib.Path({run_dir!r}) / "metrics.jsonl"
proc = start({args!r}, lambda: metrics.exists() and metrics.read_text().count("\\n") >= 2)
second = subprocess.run([sys.executable, "-m", "imperiale_cli", "train", "--resume", "run_dir={run_dir}"],
                        capture_output=True, text=True)
proc.kill(); proc.wait()
verdict(second.returncode == 2 and f"process {{proc.pid}}" in second.stderr, second.stderr.strip(), second.stderr)
'''))
    out = s.root / "eval-sigterm"
    eval_args = ["eval", "--agents", "pimc:4,heuristic", "--deals", "3000", "--workers", "2", "--no-progress",
                 "--out", str(out)]
    cases.append(_driver(area, "SIGTERM to eval --workers 2", f'''
t0 = time.time()
proc = start({eval_args!r}, lambda: time.time() - t0 > 6)
os.kill(proc.pid, signal.SIGTERM)
out, err = proc.communicate(timeout=60)
ok = proc.returncode == 130 and "Traceback" not in err and (pathlib.Path({str(out)!r}) / "results.json").exists()
verdict(ok, "results.json written; " + err.strip().splitlines()[-1], err)
'''))
    cases.append(_driver(area, "a pimc worker killed mid-eval", f'''
t0 = time.time()
proc = start({eval_args[:-2]!r}, lambda: time.time() - t0 > 6)
parents = {{}}
for e in pathlib.Path("/proc").iterdir():
    if e.name.isdigit():
        try: parents[int(e.name)] = int((e / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except Exception: pass
children = [p for p, q in parents.items() if q == proc.pid]
workers = [p for p, q in parents.items() if q in children]
os.kill(workers[0], signal.SIGKILL)
out, err = proc.communicate(timeout=60)
verdict(proc.returncode == 2 and "worker process died" in err, err.strip().splitlines()[-1], err)
'''))
    return cases


def _fail_with(code: int, where: str) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Run a call with ``os.<where>`` failing with ``code`` (an injected ENOSPC or EROFS)."""
    def wrap(fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            real = getattr(os, where)

            def fail(*a: Any, **k: Any) -> Any:
                raise OSError(code, os.strerror(code))
            setattr(os, where, fail)
            try:
                return fn()
            finally:
                setattr(os, where, real)
        return run
    return wrap


def disk_cases(s: Scratch) -> list[Case]:
    import errno

    from imperiale_env.core.atomic import write_atomic
    from imperiale_env.records.game_records import save_records

    area = "faults: disk"
    cases = []
    for label, code, where in (("full disk (ENOSPC at fsync)", errno.ENOSPC, "fsync"),
                               ("read-only disk (EROFS at rename)", errno.EROFS, "replace")):
        good = s.root / f"kept-{where}.jsonl"
        good.write_text('{"kept": true}\n')
        kept = _kept(good, '{"kept": true}\n')
        cases.append(_call(area, f"records on a {label}", _fail_with(code, where)(
            lambda p=good: save_records(p, [{"new": 1}])), expect="error", check=kept))
        out = s.root / f"analysis-{where}.json"
        out.write_text("{}")
        cases.append(_call(area, f"analyse --out on a {label}", _fail_with(code, where)(
            lambda p=out: write_atomic(p, "{...}", what="analysis")), expect="error", check=_kept(out, "{}")))
    try:
        import torch  # noqa: F401

        from imperiale_train.checkpoint import save_checkpoint
    except ImportError:
        return cases
    ckpt = s.root / "ckpt-full" / "checkpoint.pt"
    save_checkpoint(ckpt, {"iteration": 1})
    before = ckpt.read_bytes()
    cases.append(_call(area, "checkpoint on a full disk", _fail_with(errno.ENOSPC, "fsync")(
        lambda: save_checkpoint(ckpt, {"iteration": 2})), expect="error",
        check=lambda: None if ckpt.read_bytes() == before else "the last good checkpoint was replaced"))
    tmpfs = s.root / "tmpfs"
    cases.append(_sub_code(area, "checkpoint on a real 64 KiB tmpfs", f'''
import os, subprocess, sys, torch
os.makedirs({str(tmpfs)!r}, exist_ok=True)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", {str(tmpfs)!r}]).returncode:
    sys.exit(0)  # mounting not allowed here: counted as accepted
try:
    from imperiale_train.checkpoint import save_checkpoint
    save_checkpoint({str(tmpfs)!r} + "/c.pt", {{"iteration": 1}})
    save_checkpoint({str(tmpfs)!r} + "/c.pt", {{"iteration": 2, "w": torch.zeros(100000)}})
except OSError as exc:
    kept = torch.load({str(tmpfs)!r} + "/c.pt", weights_only=True)["iteration"] == 1
    print(("error: " if kept else "lost: ") + str(exc), file=sys.stderr)
    sys.exit(2 if kept else 3)
finally:
    subprocess.run(["umount", {str(tmpfs)!r}])
'''))
    return cases


def _kept(path: pathlib.Path, text: str) -> Callable[[], str | None]:
    return lambda: None if path.read_text() == text and not list(path.parent.glob(f".{path.name}.*.tmp")) else \
        f"{path} was changed or a temporary file was left"


def worker_cases(s: Scratch) -> list[Case]:
    from imperiale_agents.parallel.process_pool import WorkerPool

    area = "faults: workers"
    cases = []
    for method in ("spawn", "fork", "forkserver"):
        cases.append(_call(area, f"a worker that dies ({method})",
                           lambda m=method: WorkerPool(2, "test tasks", start_method=m).map(os._exit, [3, 3]),
                           expect="error", fast=False))
    cases.append(_call(area, "start method 'thread'", lambda: WorkerPool(1, "x", start_method="thread"),
                       expect="error"))
    return cases


def ray_cases(s: Scratch) -> list[Case]:
    return [_sub_code("faults: ray", "eval --ray at a port that is not Ray", '''
import socket, sys, threading
from imperiale_agents.parallel import ray_cluster as cluster
server = socket.create_server(("127.0.0.1", 0))
threading.Thread(target=server.accept, daemon=True).start()
cluster.CONNECT_SECONDS = 3
try:
    cluster.connect(f"127.0.0.1:{server.getsockname()[1]}")
except cluster.ClusterError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
''', expect="error")]


def bound_cases(s: Scratch) -> list[Case]:
    from imperiale_env.records import game_records

    area = "faults: records/yaml"
    many = s.root / "many-deals.jsonl"
    many.write_text('{"deals": [' + ",".join(["{}"] * (game_records.MAX_DEALS + 1)) + "]}\n")
    deep = s.root / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    big = s.root / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(game_records.MAX_FILE_BYTES + 1)  # sparse: no disk used
    cases = [_cli(area, f"replay {p.name}", ["replay", p], expect="error") for p in (many, deep, big)]
    bomb = s.root / "bomb.yaml"
    bomb.write_text("a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9)))
    anchor = s.root / "anchor.yaml"
    anchor.write_text("lr: &x 0.001\nent_coef: *x\n")
    cases += [_cli(area, f"train --config {p.name}", ["train", "--config", p, *TINY_TRAIN, f"run_dir={s.run_dir()}"],
                   expect="error") for p in (bomb, anchor)]
    return cases


AREAS: tuple[Callable[[Scratch], list[Case]], ...] = (
    record_cases, play_cases, eval_cases, train_cases, checkpoint_cases, bench_cases, rules_cases, aec_cases,
    gym_cases, vector_cases, batch_cases, agent_cases, hostile_cases, signal_cases, disk_cases, worker_cases,
    ray_cases, bound_cases,
)


def build_cases(scratch: Scratch, *, fast_only: bool = False) -> list[Case]:
    cases: list[Case] = []
    for build in AREAS:
        if fast_only and build is checkpoint_cases:
            continue  # needs a training run
        cases += build(scratch)
    return [c for c in cases if c.fast] if fast_only else cases


# ---------------------------------------------------------------------------------------- running and reporting


def run_all(cases: list[Case], scratch: pathlib.Path, timeout: float, workers: int = 2,
            progress: Callable[[Result], None] | None = None) -> list[Result]:
    """Subprocess cases in a small thread pool, in-process cases on the main thread meanwhile."""
    from concurrent.futures import ThreadPoolExecutor

    results: dict[int, Result] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {i: pool.submit(run_case, c, timeout, scratch) for i, c in enumerate(cases) if not c.in_process}
        cwd = os.getcwd()
        os.chdir(scratch)  # relative paths a case writes land in the scratch folder
        try:
            for i, c in enumerate(cases):
                if c.in_process:
                    results[i] = run_case(c, timeout, scratch)
                    if progress:
                        progress(results[i])
        finally:
            os.chdir(cwd)
        for i, future in futures.items():
            results[i] = future.result()
            if progress:
                progress(results[i])
    return [results[i] for i in range(len(cases))]


def table(results: list[Result]) -> str:
    areas: dict[str, Counter] = {}
    for r in results:
        areas.setdefault(r.case.area, Counter())[r.outcome] += 1
    head = f"| {'area':<20} | " + " | ".join(f"{o:>9}" for o in OUTCOMES) + " | total |"
    lines = [head, "|" + "-" * 22 + "|" + "|".join("-" * 10 + ":" for _ in OUTCOMES) + "|------:|"]
    total: Counter = Counter()
    for area, counts in areas.items():
        total += counts
        lines.append(f"| {area:<20} | " + " | ".join(f"{counts[o]:>9}" for o in OUTCOMES) +
                     f" | {sum(counts.values()):>5} |")
    lines.append(f"| {'all':<20} | " + " | ".join(f"{total[o]:>9}" for o in OUTCOMES) +
                 f" | {sum(total.values()):>5} |")
    return "\n".join(lines)


def listing(results: list[Result], outcomes: tuple[str, ...]) -> str:
    lines = []
    for r in results:
        if r.outcome in outcomes:
            flag = "  [should be refused]" if r.outcome == "accepted" and r.case.expect == "error" else ""
            lines.append(f"- {r.outcome:<9} {r.case.area}: {r.case.name}{flag}: {r.detail[:200]}")
    return "\n".join(lines)


def markdown(results: list[Result], seconds: float) -> str:
    parts = [f"# Bad inputs: {len(results)} cases, {seconds:.0f} s", "", table(results), ""]
    for title, outcomes in (("Not a clear error", ("traceback", "hang", "other")), ("Accepted", ("accepted",)),
                            ("Clear errors", ("clear",))):
        parts += [f"## {title}", "", listing(results, outcomes) or "(none)", ""]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="only the quick in-process cases (the tests' subset)")
    parser.add_argument("--area", action="append", help="only these areas (repeatable), e.g. --area bench")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a case counts as a hang")
    parser.add_argument("--workers", type=int, default=2, help="subprocess cases run at once (default 2)")
    parser.add_argument("--out", help="also write the report to this new file (.md or .json; never overwritten)")
    parser.add_argument("--verbose", action="store_true", help="print each case as it ends")
    args = parser.parse_args(argv)
    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        parser.error(f"--timeout must be a positive number of seconds, got {args.timeout}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    out = pathlib.Path(args.out) if args.out else None
    if out is not None:
        if out.exists():
            parser.error(f"{out} exists already; it is not overwritten: choose another name")
        if out.suffix not in (".md", ".json"):
            parser.error(f"--out must end in .md or .json, got {out.name!r}")
        if not out.parent.resolve().is_dir():
            parser.error(f"no such folder for --out: {out.parent}")
    limit = 8 << 30  # a runaway in-process case fails with MemoryError instead of starving the machine
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    start = time.perf_counter()
    root = pathlib.Path(tempfile.mkdtemp(prefix="imperiale_bad_inputs_"))
    try:
        scratch = Scratch(root)
        cases = build_cases(scratch, fast_only=args.fast)
        if args.area:
            cases = [c for c in cases if c.area in args.area]
        subprocesses = sum(not c.in_process for c in cases)
        print(f"{len(cases)} cases ({subprocesses} in subprocesses), timeout {args.timeout:g} s", file=sys.stderr)

        def progress(r: Result) -> None:
            if args.verbose:
                print(f"{r.outcome:<9} {r.seconds:6.2f}s {r.case.area}: {r.case.name}: {r.detail[:150]}",
                      file=sys.stderr)

        results = run_all(cases, root, args.timeout, args.workers, progress)
    finally:
        for p in root.rglob("*"):  # unreadable test files must not stop the clean-up
            with contextlib.suppress(OSError):
                if not p.is_symlink():
                    p.chmod(0o700 if p.is_dir() else 0o600)
        shutil.rmtree(root, ignore_errors=True)
    seconds = time.perf_counter() - start
    print(table(results))
    print()
    print("Not a clear error:")
    print(listing(results, ("traceback", "hang", "other")) or "(none)")
    print()
    print("Accepted as valid (judge each):")
    print(listing(results, ("accepted",)) or "(none)")
    print(f"\n{len(results)} cases in {seconds:.0f} s")
    if out is not None:
        text = (json.dumps({"seconds": round(seconds, 1), "cases": [r.row() for r in results]}, indent=1)
                if out.suffix == ".json" else markdown(results, seconds))
        with open(out, "x", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
