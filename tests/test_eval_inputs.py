"""``imperiale eval`` and the agent specs: every bad setting is refused before the first game,
results are never overwritten, and Ctrl-C keeps the finished matches, marked partial."""

from __future__ import annotations

import json

import pytest

from imperiale_agents.base import AGENT_FORMS, MAX_SAMPLES, AgentError, make_agent
from imperiale_agents.tournament import match as tournament
from imperiale_agents.tournament.match import run_tournament
from imperiale_agents.tournament.report import check_outputs, write_outputs
from imperiale_cli.cli import main
from imperiale_env.core.input_checks import InputError
from imperiale_env.core.rules import make_rules

FAST = ["--games", "2", "--target", "1", "--no-progress"]


@pytest.fixture
def no_games(monkeypatch):
    """Fail the test if any match starts: the error must come before the tournament."""

    def forbidden(*args, **kwargs):
        raise AssertionError("a match was played although the settings are bad")

    monkeypatch.setattr(tournament, "play_match", forbidden)


def refused(argv, capsys) -> str:
    assert main(["eval", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.startswith("imperiale eval: error: ")
    return captured.err


def argparse_refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as info:
        main(["eval", *argv])
    assert info.value.code == 2
    return capsys.readouterr().err


# ---------------------------------------------------------------------- agent specs, for every entry point


BAD_SPECS = ["random:3", "heuristic:7", "human:1", "random:", "pimc:abc", "pimc:0", "pimc:3:99", "pimc:3:0",
             "pimc:", "pimc:1:2:3", "pimc:+3", "pimc: 3", "pimc:3.0", "pimc:1e3", f"pimc:{MAX_SAMPLES + 1}",
             "pimc:-1", "neural:", "neural: ", "Random", "alphazero", " ", ""]


@pytest.mark.parametrize("spec", BAD_SPECS)
def test_make_agent_reads_specs_exactly(spec):
    with pytest.raises(AgentError) as info:
        make_agent(spec)
    assert AGENT_FORMS in str(info.value) or "neural:PATH needs" in str(info.value)


def test_neural_checkpoint_must_be_a_file(tmp_path):
    (tmp_path / "dir.pt").mkdir()
    with pytest.raises(AgentError, match="no such checkpoint"):
        make_agent(f"neural:{tmp_path / 'missing.pt'}")
    with pytest.raises(AgentError, match="is a directory"):
        make_agent(f"neural:{tmp_path / 'dir.pt'}")


@pytest.mark.parametrize("workers", [0, -1, 257, 1.5, True])
def test_workers_range(workers):
    with pytest.raises(AgentError, match="workers must be an integer from 1 to 256"):
        make_agent("pimc", workers=workers)


def test_good_specs_still_build():
    assert make_agent("pimc:3:9").samples == 3 and make_agent("pimc:3:9").horizon == 9
    assert make_agent(f"pimc:{MAX_SAMPLES}").samples == MAX_SAMPLES
    assert make_agent(" random ").name == "random"


@pytest.mark.parametrize("spec", ["random:3", "pimc:abc", "pimc:3:99", "neural:/no/such.pt"])
def test_eval_checks_every_spec_before_the_first_game(spec, no_games, capsys):
    err = refused(["--agents", f"random,heuristic,{spec}", *FAST], capsys)
    assert repr(spec) in err or spec in err


@pytest.mark.parametrize("agents", ["random", "random,", ",random", "random,,heuristic", ""])
def test_eval_needs_two_named_agents(agents, no_games, capsys):
    assert "at least two" in refused([f"--agents={agents}", *FAST], capsys)


# ---------------------------------------------------------------------- numbers


@pytest.mark.parametrize("option, value", [("--games", "1"), ("--games", "0"), ("--games", "-5"),
                                           ("--games", "100001"), ("--games", "x"), ("--deals", "1")])
def test_group_count_range(option, value, capsys):
    assert "from 2 to 100000" in argparse_refused([f"{option}={value}"], capsys)


def test_run_tournament_needs_two_groups():
    with pytest.raises(ValueError, match="at least 2"):
        run_tournament(["random", "heuristic"], groups=1)


@pytest.mark.parametrize("workers", ["0", "-1", "257"])
def test_eval_workers_range(workers, no_games, capsys):
    assert "from 1 to 256" in refused([f"--workers={workers}", *FAST], capsys)


@pytest.mark.parametrize("seed", ["-1", str(2**63), str(2**64), "abc", "1.5"])
def test_eval_seed_range(seed, capsys):
    assert "[0, 2**63)" in argparse_refused([f"--seed={seed}"], capsys)


@pytest.mark.parametrize("target", ["0", "-1"])
def test_eval_rules_errors_are_clean(target, no_games, capsys):
    assert "target_imperiales" in refused([f"--target={target}", "--agents", "random,heuristic", "--games", "2"],
                                          capsys)


def test_eval_unknown_rules(no_games, capsys):
    assert "unknown rules preset 'nope'" in refused(["--rules", "nope", *FAST], capsys)


# ---------------------------------------------------------------------- --out


def test_out_checked_before_the_tournament(tmp_path, no_games, capsys):
    (tmp_path / "file").write_text("x")
    assert "is a file" in refused(["--out", str(tmp_path / "file"), *FAST], capsys)
    assert "is a file" in refused(["--out", str(tmp_path / "file" / "sub"), *FAST], capsys)
    assert "is empty" in refused(["--out=", *FAST], capsys)


def test_existing_results_are_not_overwritten(tmp_path, no_games, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.md").write_text("last week's results")
    err = refused(["--out", str(out), *FAST], capsys)
    assert "results.md" in err and "not overwritten" in err
    assert (out / "results.md").read_text() == "last week's results"


def test_results_that_appear_during_the_tournament_are_kept(tmp_path):
    out = tmp_path / "out"
    check_outputs(out)
    result = run_tournament(["random", "heuristic"], "academie", groups=2, seed=1, single_deal=True)
    out.mkdir()
    (out / "results.json").write_text("someone else's")
    paths = write_outputs(result, out)
    assert (out / "results.json").read_text() == "someone else's"
    assert paths["json"] == out / "results-2.json"
    assert json.loads(paths["json"].read_text())["partial"] is False
    with pytest.raises(InputError, match="already holds results.json, results.md"):
        check_outputs(out)


# ---------------------------------------------------------------------- Ctrl-C


def test_ctrl_c_keeps_the_finished_matches(tmp_path, monkeypatch, capsys):
    played = tournament.play_match
    calls = []

    def interrupted_on_the_second_match(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return played(*args, **kwargs)

    monkeypatch.setattr(tournament, "play_match", interrupted_on_the_second_match)
    out = tmp_path / "out"
    rc = main(["eval", "--agents", "random,heuristic,heuristic", "--games", "2", "--target", "1", "--seed", "4",
               "--out", str(out), "--no-progress"])
    captured = capsys.readouterr()
    assert rc == 130
    assert "PARTIAL" in captured.out and "1 of 3 matches finished" in captured.out
    assert "interrupted" in captured.err and "Traceback" not in captured.err
    data = json.loads((out / "results.json").read_text())
    assert data["partial"] is True and data["matches_finished"] == 1 and data["matches_planned"] == 3
    assert len(data["pairings"]) == 1 and data["pairings"][0]["games"] == 4
    # The finished match is exactly the one a whole tournament plays first.
    monkeypatch.setattr(tournament, "play_match", played)
    rules = make_rules("academie", target_imperiales=1)
    whole = run_tournament(["random", "heuristic", "heuristic"], rules, groups=2, seed=4).to_dict()
    assert whole["partial"] is False and len(whole["pairings"]) == 3
    assert data["pairings"][0] == whole["pairings"][0]


def test_ctrl_c_propagates_from_the_library_by_default(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament, "play_match", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_tournament(["random", "heuristic"], groups=2)
