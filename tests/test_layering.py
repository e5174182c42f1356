"""Layering: leaf modules import light, and the packages import each other in one direction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_a_leaf_module_does_not_import_the_environment_libraries():
    loaded = _modules_after("import imperiale_env.core.cards, imperiale_env.core.rules, imperiale_env.reference.game")
    assert "imperiale_env.core.cards" in loaded
    assert not {"gymnasium", "pettingzoo", "imperiale_env.envs.aec", "agents", "train", "torch"} & loaded


def test_the_environments_register_when_gymnasium_comes_after_or_before():
    after = "import imperiale_env, gymnasium; gymnasium.make('Imperiale-v0'); print(imperiale_env.env)"
    before = "import gymnasium, imperiale_env; gymnasium.make_vec('ImperialeSelfPlay-v0', num_envs=2)"
    assert "gymnasium" in _modules_after(after) and "gymnasium" in _modules_after(before)


def test_agents_do_not_import_training_code_on_import():
    loaded = _modules_after("import imperiale_agents.base, imperiale_agents.tournament, imperiale_agents.heuristic")
    assert not {m for m in loaded if m == "train" or m.startswith("train.")}


def test_the_bottom_package_never_imports_the_layers_above():
    above = ("agents", "train", "imperiale_cli")
    offenders = []
    for path in sorted((ROOT / "imperiale_env").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            words = line.split()
            if len(words) >= 2 and words[0] in ("import", "from") and words[1].split(".")[0] in above:
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []
