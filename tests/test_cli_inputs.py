"""Every bad input to ``replay``, ``bench`` and the command line as a whole ends in one clear line
on stderr and exit status 2 (never a traceback); a closed pipe and Ctrl-C end quietly."""

from __future__ import annotations

import importlib
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import json_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imperiale_cli import cli
from imperiale_cli.cli import main
from imperiale_cli.devtools.bench_engine import run_bench
from imperiale_env.core.rules import RulesError
from imperiale_env.records.game_records import RecordError, load_records, record_from_game, save_records
from imperiale_env.reference.game import Game

ROOT = Path(__file__).resolve().parents[1]


def finished_record(preset: str = "academie", seed: int = 3) -> dict:
    game = Game(preset, seed)
    rng = random.Random(seed)
    while not game.is_over:
        game.step(rng.choice(game.legal_actions()))
    return record_from_game(game)


def refused(argv: list[str], capsys) -> str:
    """Run the command, which must end with exit 2 and one error line on stderr; that line."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    assert captured.err.startswith(f"imperiale {argv[0]}: error: ")
    assert captured.err.count("\n") == 1
    return captured.err


def argparse_refused(argv: list[str], capsys) -> str:
    """An option refused by the parser: exit 2, usage and the reason on stderr."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err
    return err


# ---------------------------------------------------------------------- replay: files that are not records


def _mangled_record_text(data) -> bytes:
    """A valid record's text with a few bytes replaced, cut or doubled (hypothesis draws the edits)."""
    text = bytearray(json.dumps(_RECORD).encode())
    for position, byte, how in data:
        i = position % (len(text) + 1)
        if how == 0:
            text[i:i + 1] = bytes([byte])
        elif how == 1:
            del text[i:]
        else:
            text[i:i] = text[i:i + 8]
    return bytes(text)


_RECORD = None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255), st.integers(0, 2)), max_size=4),
       suffix=st.sampled_from([".json", ".jsonl"]))
def test_any_mangled_record_ends_in_records_or_a_record_error(edits, suffix, tmp_path):
    """Whatever the bytes, reading and replaying ends in the replay or a RecordError, never another exception."""
    global _RECORD
    if _RECORD is None:
        _RECORD = finished_record(seed=8)
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(_mangled_record_text(edits))
    try:
        from imperiale_env.records.game_records import replay_record

        for record in load_records(path):
            replay_record(record)
    except RecordError as exc:
        assert str(exc)


def _deep(path: Path) -> None:
    path.write_text("[" * 100_000 + "]" * 100_000)


BAD_FILES = {
    "latin1.json": (lambda p: p.write_bytes('{"format": "é"}'.encode("latin-1")), "not UTF-8 text"),
    "utf16.json": (lambda p: p.write_bytes(json.dumps({"format": 1}).encode("utf-16")), "UTF-16"),
    "utf16le.json": (lambda p: p.write_bytes(json.dumps({"format": 1}).encode("utf-16-le")), "NUL byte"),
    "binary.json": (lambda p: p.write_bytes(bytes(range(256)) * 4), "not UTF-8 text"),
    "bom.json": (lambda p: p.write_bytes(b'\xef\xbb\xbf{"format": 1}'), "byte-order mark"),
    "deep.json": (_deep, "nested too deeply"),
    "deep.jsonl": (_deep, "nested too deeply"),
    "nan.json": (lambda p: p.write_text('{"format": NaN}'), "NaN is not a JSON value"),
    "huge.json": (lambda p: p.write_text('{"players": ' + "9" * 5000 + "}"), "5000 digits"),
    "empty.json": (lambda p: p.write_text(""), "invalid JSON"),
    "list.json": (lambda p: p.write_text("[]"), "a record is a JSON object"),
    "dup.json": (lambda p: p.write_text('{"format": 1, "format": 2}'), "'format' is written twice"),
    "game.txt": (lambda p: p.write_text("{}"), ".json or .jsonl"),
    "blank.jsonl": (lambda p: p.write_text("\n  \n"), "holds no record"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_replay_refuses_files_that_are_not_records(name, tmp_path, capsys):
    make, message = BAD_FILES[name]
    path = tmp_path / name
    make(path)
    err = refused(["replay", str(path)], capsys)
    assert message in err and name in err


def test_replay_refuses_a_duplicate_key_deep_in_a_record(tmp_path, capsys):
    text = json.dumps(finished_record())
    # The first action of the first deal names its player twice (the second value would win silently).
    text = text.replace('{"player": ', '{"player": 0, "player": ', 1)
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(finished_record(seed=4)) + "\n" + text + "\n")
    err = refused(["replay", str(path)], capsys)
    assert "line 2" in err and "'player' is written twice" in err


@pytest.mark.parametrize("kind", ["directory", "fifo", "missing", "empty"])
def test_replay_names_what_the_path_is(kind, tmp_path, capsys):
    path = tmp_path / "game.json"
    expected = {"directory": "is a directory", "fifo": "FIFO", "missing": "no such record file",
                "empty": "path is empty"}[kind]
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # never opened: reading it would wait for a writer for ever
    elif kind == "empty":
        path = Path("")
    err = refused(["replay", "" if kind == "empty" else str(path)], capsys)
    assert expected in err


def test_replay_names_the_record_of_a_jsonl_that_does_not_replay(tmp_path, capsys):
    good, bad = finished_record(), finished_record(seed=5)
    bad["deals"][0]["actions"][0]["player"] = 1 - bad["deals"][0]["actions"][0]["player"]
    path = tmp_path / "games.jsonl"
    save_records(path, [good, bad])
    err = refused(["replay", str(path), "--json"], capsys)
    assert "record 2 of 2" in err and "deal 0, action 0" in err


def test_load_records_library_errors_are_record_errors(tmp_path):
    (tmp_path / "d.json").mkdir()
    with pytest.raises(RecordError, match="is a directory"):
        load_records(tmp_path / "d.json")


@pytest.mark.parametrize("indent", ["-1", "17", "x"])
def test_replay_indent_range(indent, tmp_path, capsys):
    assert "0 to 16" in argparse_refused(["replay", str(tmp_path / "g.json"), f"--indent={indent}"], capsys)


# ---------------------------------------------------------------------- a reader that stops reading


class _ClosedPipe(io.TextIOBase):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_broken_pipe_in_process(tmp_path, monkeypatch, capsys):
    path = tmp_path / "g.json"
    save_records(path, [finished_record()])
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["replay", str(path)]) == 141
    assert capsys.readouterr().err == ""


def test_replay_into_head_exits_quietly(tmp_path):
    """``imperiale replay FILE | head -2``: the output (megabytes) cannot all fit in the pipe,
    so the writer meets the closed pipe; it must end with status 141 and nothing on stderr."""
    path = tmp_path / "many.jsonl"
    save_records(path, [finished_record(seed=s) for s in range(12)])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "imperiale_cli", "replay", str(path), "--json"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    head = [proc.stdout.readline() for _ in range(2)]
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert head[0].strip() == b"["
    assert err == ""


def test_ctrl_c_ends_a_command_with_130(tmp_path, monkeypatch, capsys):
    path = tmp_path / "g.json"
    save_records(path, [finished_record()])

    def interrupted(record):
        raise KeyboardInterrupt

    monkeypatch.setattr("imperiale_env.records.game_records.replay_record", interrupted)
    assert main(["replay", str(path), "--json"]) == 130
    err = capsys.readouterr().err
    assert "imperiale replay: interrupted" in err and "Traceback" not in err


# ---------------------------------------------------------------------- the error types main() reports


def test_every_user_error_name_is_a_real_exception():
    """``main`` finds the user-error classes by module and name: each must exist."""
    for module, name in cli.USER_ERRORS:
        if module.startswith("train."):
            pytest.importorskip("torch")
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, Exception)


def test_a_programming_error_is_not_disguised(monkeypatch, tmp_path):
    path = tmp_path / "g.json"
    save_records(path, [finished_record()])

    def broken(record):
        raise ValueError("a bug, not a bad input")

    monkeypatch.setattr("imperiale_env.records.game_records.replay_record", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(["replay", str(path), "--json"])


# ---------------------------------------------------------------------- bench


@pytest.mark.parametrize("seconds", ["0", "-1", "nan", "inf", "-inf", "601", "abc", ""])
def test_bench_seconds_range(seconds, capsys):
    assert "from 0.01 to 600" in argparse_refused(["bench", f"--seconds={seconds}"], capsys)


@pytest.mark.parametrize("sizes", ["0", "-1", "1,,2", "abc", "65537", "", "1.5", "2,-3"])
def test_bench_batch_sizes(sizes, capsys):
    err = argparse_refused(["bench", f"--batch-sizes={sizes}"], capsys)
    assert "65536" in err


def test_bench_unknown_rules_before_any_measurement(capsys):
    err = refused(["bench", "--rules", "nope", "--seconds", "600"], capsys)  # 600 s a measurement: it must not start
    assert "unknown rules preset 'nope'" in err


@pytest.mark.parametrize("kwargs, error", [
    ({"rules": "nope"}, RulesError), ({"seconds": 0}, ValueError), ({"seconds": float("nan")}, ValueError),
    ({"seconds": float("inf")}, ValueError), ({"batch_sizes": []}, ValueError),
    ({"batch_sizes": [10**6]}, ValueError), ({"batch_sizes": [2.5]}, ValueError),
])
def test_run_bench_checks_when_called_not_when_iterated(kwargs, error):
    with pytest.raises(error):
        run_bench(**{"batch_sizes": [1], "seconds": 0.01, **kwargs})  # not iterated: no line asked for


def test_cli_limits_match_the_library():
    from imperiale_agents.tournament import match as tournament
    from imperiale_cli.devtools import bench_engine as bench

    assert cli.MAX_BATCH_SIZE == bench.MAX_BATCH_SIZE
    assert cli.MAX_BENCH_SECONDS == bench.MAX_SECONDS
    assert cli.MIN_GROUPS == tournament.MIN_GROUPS


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(pick=st.integers(0, 10**6), value=_JSON)
def test_any_value_anywhere_in_a_record_ends_in_a_replay_or_a_record_error(pick, value):
    """One field of a valid record replaced by any JSON value: replayed, or refused with a RecordError."""
    from imperiale_env.records.game_records import replay_record

    global _RECORD
    if _RECORD is None:
        _RECORD = finished_record(seed=8)
    record = json.loads(json.dumps(_RECORD))
    paths = list(json_paths(record))[1:]
    *parents, last = paths[pick % len(paths)]
    holder = record
    for key in parents:
        holder = holder[key]
    holder[last] = value
    try:
        replay_record(record)
    except RecordError as exc:
        assert str(exc)


@pytest.mark.parametrize("act", [[], {}, 1, None])
def test_an_action_whose_act_is_not_a_string(act):
    """Found by the fuzz test above: an unhashable ``act`` raised TypeError."""
    from imperiale_env.records.game_records import replay_record

    record = finished_record(seed=8)
    record["deals"][0]["actions"][0]["act"] = act
    with pytest.raises(RecordError, match="deal 0, action 0 .*one of play, show, hide, point, sink"):
        replay_record(record)
