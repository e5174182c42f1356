"""Bad inputs end in a clear error or a valid run, never in a traceback, a hang or lost data.

The fixed cases are the quick in-process subset of ``benchmarks/bad_inputs.py`` (records,
play, eval, train configs, bench, rules fields, the environments, BatchGame, agent specs):
every one must end as a clear error or a valid run, and those the bad-input issue names as
silently wrong must be refused. The fuzz part draws malformed records, training overrides and
command lines with hypothesis and asserts only that each ends in a clear error or a success.
"""

from __future__ import annotations

import copy
import importlib.util
import io
import json
import pathlib
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest
from helpers import json_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bad_inputs", ROOT / "benchmarks" / "bad_inputs.py")
bad_inputs = importlib.util.module_from_spec(_spec)
sys.modules["bad_inputs"] = bad_inputs
_spec.loader.exec_module(bad_inputs)

TIMEOUT = 20.0
FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return bad_inputs.Scratch(tmp_path_factory.mktemp("bad_inputs"))


@pytest.fixture(scope="module")
def results(scratch, tmp_path_factory):
    """Every quick case, run once for the module (in a scratch folder as the working directory)."""
    cases = bad_inputs.build_cases(scratch, fast_only=True)
    assert len(cases) >= 300
    return bad_inputs.run_all(cases, scratch.root, TIMEOUT)


def _report(bad):
    return "\n".join(f"{r.case.area}: {r.case.name}: {r.outcome}: {r.detail[:200]}" for r in bad)


def test_no_bad_input_ends_in_a_traceback_hang_or_lost_data(results):
    bad = [r for r in results if r.outcome not in ("clear", "accepted")]
    assert not bad, f"{len(bad)} of {len(results)} bad inputs did not end cleanly:\n{_report(bad)}"


def test_the_inputs_the_issue_names_are_refused(results):
    silent = [r for r in results if r.case.expect == "error" and r.outcome == "accepted"]
    assert not silent, f"{len(silent)} bad inputs were accepted as valid:\n{_report(silent)}"


def test_valid_inputs_among_the_cases_run(results):
    refused = [r for r in results if r.case.expect == "ok" and r.outcome != "accepted"]
    assert not refused, _report(refused)


def test_the_classifier_tells_a_clear_error_from_a_traceback():
    from imperiale_env.core.rules import RulesError

    assert bad_inputs.classify_exception(RulesError("target_imperiales must be at least 1"))[0] == "clear"
    try:
        [][1]
    except IndexError as exc:
        assert bad_inputs.classify_exception(exc)[0] == "traceback"
    assert bad_inputs.classify_exception(AssertionError())[0] == "traceback"
    assert bad_inputs._classify_exit(2, "", "imperiale replay: error: no such file")[0] == "clear"
    assert bad_inputs._classify_exit(0, "{}", "")[0] == "accepted"
    assert bad_inputs._classify_exit(1, "", "Traceback (most recent call last):\n  ...\nKeyError: 1")[0] == "traceback"


# ------------------------------------------------------------------------------------------ fuzzing

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def malformed_records(draw, base):
    record = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in json_paths(record) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = record
        for key in path[:-1]:
            parent = parent[key]
        how = draw(st.sampled_from(("replace", "delete", "add")))
        if how == "replace":
            parent[path[-1]] = draw(_json)
        elif how == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=5))] = draw(_json)
        else:
            parent.insert(path[-1], draw(_json))
    return record


def _clear_or_success(fn):
    """Run ``fn``; fail on anything but a return or a clear error."""
    try:
        with bad_inputs._alarm(TIMEOUT):
            value = fn()
    except Exception as exc:  # noqa: BLE001 - the point is to classify every exception
        outcome, detail = bad_inputs.classify_exception(exc)
        assert outcome == "clear", detail
        return None
    return value


def test_fuzz_malformed_records(scratch, tmp_path):
    from imperiale_cli.cli import main
    from imperiale_env.records.game_records import game_from_record

    path = tmp_path / "fuzz.json"

    @FUZZ
    @given(malformed_records(scratch.record))
    def check(record):
        _clear_or_success(lambda: game_from_record(record))
        path.write_text(json.dumps(record))
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
            rc = _clear_or_success(lambda: main(["replay", str(path)]))
        assert rc in (None, 0, 2), err.getvalue()
        if rc == 2:
            assert "error:" in err.getvalue()

    check()


_KEYS = st.sampled_from(["lr", "seed", "num_envs", "hidden", "rules", "eval_opponents", "gamma", "iterations",
                         "device", "critic", "target_imperiales", "run_dir", "progress", "p_pool", "colour", ""])
_VALUES = st.one_of(st.sampled_from(["0", "-1", "1", "1.5", "nan", "inf", "-inf", "1e309", "", "true", "abc",
                                     "8,8", "8,,8", "2**64", str(2**64), "random,heuristic", "pimc:x", "é", "\x00"]),
                    st.text(max_size=8))


def test_fuzz_training_overrides():
    from imperiale_train.config import make_config

    @FUZZ
    @given(st.lists(st.tuples(_KEYS, _VALUES), max_size=4), st.booleans())
    def check(items, no_equals):
        overrides = [k if no_equals and i == 0 else f"{k}={v}" for i, (k, v) in enumerate(items)]
        _clear_or_success(lambda: make_config(None, overrides))

    check()


_FLAGS = {
    "replay": st.sampled_from([["--indent", "x"], ["--indent", "-1"], ["FILE"], ["NOWHERE"], ["DIR"], [""]]),
    "play": st.sampled_from([["--seed", "-1"], ["--seed", str(2**64)], ["--seed", "x"], ["--seat", "3"],
                             ["--rules", "nope"], ["--opponent", "nope"], ["--opponent", "pimc:x"],
                             ["--save", "x.txt"], ["--save", "NOWHERE"], ["--seed", "3"]]),
    "eval": st.sampled_from([["--games", "0"], ["--games", "-2"], ["--deals", "x"], ["--agents", "random"],
                             ["--agents", "random,nope"], ["--workers", "0"], ["--target", "0"], ["--seed", "-5"],
                             ["--rules", "nope"], ["--out", "/proc/nope"], ["--deals", "1", "--games", "1"]]),
    "bench": st.sampled_from([["--seconds", "0"], ["--seconds", "-1"], ["--seconds", "x"], ["--batch-sizes", "0"],
                              ["--batch-sizes", "x,1"], ["--rules", "nope"]]),
}


def test_fuzz_command_lines(scratch):

    names = {"FILE": str(scratch.record_file), "NOWHERE": str(scratch.missing), "DIR": str(scratch.dir)}

    @FUZZ
    @given(st.sampled_from(sorted(_FLAGS)).flatmap(
        lambda cmd: st.tuples(st.just(cmd), st.lists(_FLAGS[cmd], min_size=1, max_size=3))))
    def check(drawn):
        command, groups = drawn
        args = [names.get(a, a) for group in groups for a in group]
        # keep every run that is accepted short: one deal, a random opponent, a quick bench
        bound = {"play": ["--opponent", "random"], "eval": ["--no-progress", "--agents", "random,random",
                                                            "--deals", "1"],
                 "bench": ["--seconds", "0.01", "--batch-sizes", "1"]}.get(command, [])
        argv = [command, *bound, *args]
        if command == "replay" and not any(len(group) == 1 for group in groups):
            argv.append(str(scratch.record_file))  # the one positional argument, when none was drawn
        outcome, detail = bad_inputs.run_cli_in_process(argv, "quit\n\n", TIMEOUT)
        assert outcome in ("clear", "accepted"), f"{argv}: {outcome}: {detail}"

    check()


def test_the_suite_s_own_code_is_known_wherever_it_is_installed(tmp_path, monkeypatch):
    """A clear error raised by our code counts as ours from a venv's site-packages too (a
    non-editable install, or an editable one of another checkout), not only from this checkout."""
    import numpy

    import imperiale_agents.parallel.process_pool

    assert bad_inputs._ours(imperiale_agents.parallel.process_pool.__file__) and not bad_inputs._ours(numpy.__file__)
    installed = tmp_path / "lib" / "python3" / "site-packages" / "imperiale_agents"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("")
    (installed / "parallel").mkdir()
    (installed / "parallel" / "__init__.py").write_text("")
    (installed / "parallel" / "process_pool.py").write_text(
        "def refuse():\n    raise ValueError(\"start method 'thread': allowed: spawn\")\n")
    monkeypatch.setattr(sys, "path", [str(installed.parent), *sys.path])
    for name in [m for m in sys.modules if m == "imperiale_agents" or m.startswith("imperiale_agents.")]:
        monkeypatch.delitem(sys.modules, name)
    bad_inputs._our_folders.cache_clear()
    try:
        from imperiale_agents.parallel.process_pool import refuse

        with pytest.raises(ValueError) as caught:
            refuse()
        assert bad_inputs.classify_exception(caught.value)[0] == "clear"
    finally:
        bad_inputs._our_folders.cache_clear()
