"""The ``imperiale`` command line: version, help, and clear errors for bad input."""

from __future__ import annotations

from imperiale_cli.cli import main


def test_version(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("imperiale ")
    assert out.split()[-1][0].isdigit()


def test_train_refuses_a_missing_config(capsys):
    assert main(["train", "--config", "/nonexistent.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("imperiale train: error:") and "/nonexistent.yaml" in err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage: imperiale" in capsys.readouterr().err


def test_replay_missing_file(capsys):
    path = "/nonexistent.json"
    assert main(["replay", path]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("imperiale replay: error:")
    assert path in captured.err


def test_eval_help_names_every_agent_form(capsys):
    """The help is written by hand (the CLI starts without importing the agents), so this keeps it
    in step with the registry: every form an eval may name is listed."""
    import pytest

    from imperiale_agents.registry import KINDS

    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for kind in KINDS.values():
        if kind.name != "human":
            for form in kind.form.split(", "):
                assert form in text, form


def test_serve_offers_the_web_tables_default_agents():
    """The CLI does not import the web app to build its parser, so its default is written twice: kept equal here."""
    from imperiale_cli.cli import build_parser
    from imperiale_web.app import DEFAULT_AGENTS

    serve = build_parser()._subparsers._group_actions[0].choices["serve"]
    assert serve.get_default("agents") == ",".join(DEFAULT_AGENTS)
