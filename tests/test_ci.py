"""CI tries what a new user does: ``.ci/run`` runs the README's Quick start lines as written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _quick_start_commands() -> list[str]:
    """The command lines of the README's Quick start code blocks."""
    section = (ROOT / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for block in re.findall(r"```\n(.*?)```", section, re.S) for line in block.splitlines()
            if line.strip()]


def test_ci_runs_the_readme_set_up_and_test_command_as_written():
    commands = _quick_start_commands()
    assert "python3 -m venv .venv && . .venv/bin/activate" in commands
    assert 'pip install -e ".[dev]" && pytest' in commands
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    for command in commands:
        if command.startswith("imperiale ") or "imperiale train" in command:
            continue  # the main job is the first command's, not the tests'
        if command == 'pip install -e ".[dev]" && pytest':
            install = ci.index('pip install -e ".[dev]"')
            test = next(i for i, c in enumerate(ci) if c.startswith("pytest"))
            assert install < test and ci[test].startswith("pytest ||")  # the test command, its status kept
            continue
        assert command in ci, f".ci/run does not run the README's {command!r}"
    assert ci.index("python3 -m venv .venv && . .venv/bin/activate") < ci.index('pip install -e ".[dev]"')
