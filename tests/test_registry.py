"""One table of agent kinds, and your own agent by name (``module:Class``, ``file.py:Class``)."""

from __future__ import annotations

import sys
import textwrap

import gymnasium
import numpy as np
import pytest

import imperiale_env  # noqa: F401  (registers the Gymnasium ids)
from imperiale_agents.registry import AGENT_FORMS, KINDS, AgentError, loads_code, make_agent, opponent_spec
from imperiale_cli.cli import main

AGENT_SOURCE = textwrap.dedent('''
    import numpy as np

    class FirstLegal:
        """Plays the lowest legal action id."""

        def __init__(self, rules):
            self.rules = rules
            self.name = "first-legal"

        def act(self, obs, mask, rng=None):
            return np.argmax(mask, axis=1)

    class NoAct:
        pass
''')


@pytest.fixture
def agent_file(tmp_path, monkeypatch):
    path = tmp_path / "my_bots.py"
    path.write_text(AGENT_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    sys.modules.pop("my_bots", None)


def test_every_kind_is_in_the_forms_the_errors_list():
    for kind in KINDS.values():
        assert kind.form in AGENT_FORMS
    with pytest.raises(AgentError, match="module:Class, file.py:Class"):
        make_agent("nosuchkind")


def test_your_own_agent_by_module_and_by_file(agent_file):
    by_module = make_agent("my_bots:FirstLegal", "foster")
    by_file = make_agent(f"{agent_file}:FirstLegal", "foster")
    assert by_module.name == by_file.name == "first-legal" and by_module.rules.preset == "foster"
    mask = np.zeros((2, 43), bool)
    mask[0, 5] = mask[1, 7] = True
    assert by_file.act(np.zeros((2, 10)), mask).tolist() == [5, 7]


@pytest.mark.parametrize("spec, message", [
    ("my_bots:Missing", "has no class 'Missing'"),
    ("my_bots:NoAct", "has no act"),
    ("no_such_module_here:X", "cannot import module 'no_such_module_here'"),
    ("/no/such/file.py:X", "no such Python file"),
])
def test_your_own_agent_fails_clearly(agent_file, spec, message):
    with pytest.raises(AgentError, match=message):
        make_agent(spec)


def test_your_own_agent_plays_in_eval_and_as_the_env_opponent(agent_file, capsys):
    assert main(["eval", "--agents", f"{agent_file}:FirstLegal,random", "--deals", "4", "--no-progress",
                 "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "my_bots.py:FirstLegal" in out and "random" in out
    env = gymnasium.make("Imperiale-v1", opponent=make_agent("my_bots:FirstLegal"))
    obs, info = env.reset(seed=1)
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if terminated or truncated:
            break
    assert terminated


def test_what_loads_code_is_named():
    assert loads_code("my_bots:FirstLegal") and loads_code("x/y.py:Bot") and loads_code("neural:p.npz")
    assert not any(map(loads_code, ["heuristic", "pimc:16", "champion", "random"]))
    assert opponent_spec("pimc:16") and opponent_spec("my_bots:FirstLegal") and not opponent_spec("human")


def _bad_agents() -> str:
    """The misbehaving agents of benchmarks/bad_inputs.py (one source for both)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "bad_inputs", Path(__file__).resolve().parent.parent / "benchmarks" / "bad_inputs.py")
    module = sys.modules.get("bad_inputs") or importlib.util.module_from_spec(spec)
    if "bad_inputs" not in sys.modules:
        sys.modules["bad_inputs"] = module
        spec.loader.exec_module(module)
    return module.MISBEHAVING_AGENTS


@pytest.mark.parametrize("cls, text", [
    ("Illegal", r"chose action \d+ \(.*\) in game \d+ of the batch, which is illegal there; legal: 5 \(9S\), 7"),
    ("Floats", "returned float64 actions .* a float or a bool is not read as one"),
    ("NaNs", "returned float64 actions"),
    ("Nothing", "returned None of shape \\(\\); act must return one action id per game"),
    ("WrongShape", r"returned \[\[5\], .* of shape \(3, 1\); act must return one action id per game"),
    ("Raises", "raised KeyError: 'oops' while choosing actions"),
    ("Exits", "exited \\(sys.exit\\(3\\)\\) while choosing actions"),
])
def test_your_agent_misbehaving_is_one_clear_error_everywhere(tmp_path, capsys, cls, text):
    path = tmp_path / "bad_bots.py"
    path.write_text(_bad_agents())
    spec = f"{path}:{cls}"
    agent = make_agent(spec, "academie")
    mask = np.zeros((3, 43), bool)
    mask[:, [5, 7]] = True
    with pytest.raises(AgentError, match=f"agent '{cls}' \\({spec}\\) {text}"):
        agent.act(np.zeros((3, 346), np.uint8), mask, np.random.default_rng(0))
    assert main(["eval", "--agents", f"{spec},random", "--deals", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and cls in err[0] and "Traceback" not in err[0], err
    env = gymnasium.make("Imperiale-v1", opponent=agent, seat=1)
    with pytest.raises(AgentError, match=cls):
        env.reset(seed=0)


def test_your_agent_failing_to_build_or_import_is_one_clear_error(tmp_path, monkeypatch):
    path = tmp_path / "bad_bots.py"
    path.write_text(_bad_agents())
    with pytest.raises(AgentError, match="BadInit\\(rules\\) failed: RuntimeError: no model file"):
        make_agent(f"{path}:BadInit")
    (tmp_path / "broken_module.py").write_text("raise RuntimeError('missing weights')\n")
    (tmp_path / "exiting_module.py").write_text("import sys\nsys.exit(4)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AgentError, match="importing broken_module failed: RuntimeError: missing weights"):
        make_agent("broken_module:Agent")
    with pytest.raises(AgentError, match="importing exiting_module failed: SystemExit: 4"):
        make_agent("exiting_module:Agent")
    with pytest.raises(AgentError, match="running .*exiting_module.py failed: SystemExit: 4"):
        make_agent(f"{tmp_path / 'exiting_module.py'}:Agent")


def test_a_tournament_keeps_the_matches_finished_before_your_agent_failed(tmp_path, capsys):
    path = tmp_path / "bad_bots.py"
    path.write_text(_bad_agents())
    out = tmp_path / "results"
    # The round robin plays random-heuristic first, then the matches of the failing agent.
    assert main(["eval", "--agents", f"random,heuristic,{path}:Raises", "--deals", "2", "--no-progress",
                 "--out", str(out)]) == 2
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert len([line for line in err if "error" in line]) == 1 and "raised KeyError: 'oops'" in captured.err
    assert "1 of 3 matches finished before an agent failed" in captured.err
    assert "(PARTIAL: an agent failed)" in captured.out and "random" in captured.out
    import json

    saved = json.loads(next(out.glob("*.json")).read_text())
    assert saved["partial"] and saved["matches_finished"] == 1 and "oops" in saved["stopped_by"]
