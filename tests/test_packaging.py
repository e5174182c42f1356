"""The built wheel as a user installs it: no generic top-level names, the champion and the
configs inside, and a whole game against the champion without torch, from a folder that holds a
``train.py`` and an ``agents.py`` of the user's own."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=600)
    (built,) = out.glob("imperiale-*.whl")
    return built


def test_the_wheel_installs_only_names_of_its_own(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("imperiale-")}
    assert tops == {"imperiale_env", "imperiale_agents", "imperiale_train", "imperiale_cli", "imperiale_web",
                    "imperiale_configs"}
    assert {"imperiale_agents/champions/academie.npz", "imperiale_configs/champion.yaml",
            "imperiale_env/py.typed", "imperiale-0.1.0.dist-info/licenses/LICENSE"} <= set(names)
    metadata = zipfile.ZipFile(wheel).read("imperiale-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "Classifier: Typing :: Typed" in metadata


def _site_dirs() -> list[str]:
    """The running interpreter's package folders (its venv's, or the system's when it runs in none)."""
    return [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]


def _venv_reading(env_dir: Path, site_dirs: list[str]) -> Path:
    """A fresh venv whose ``sys.path`` ends with ``site_dirs``; its python.

    ``system_site_packages`` would reach the *base* interpreter's packages, not those of the venv
    the suite runs in (the README's), so the running interpreter's folders are named explicitly, as
    plain path lines of a ``.pth``: their own ``.pth`` files (the suite's editable install among
    them) are not run, and the wheel installed in the new venv comes first on the path.
    """
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "outside_packages.pth").write_text("".join(f"{d}\n" for d in site_dirs))
    return python


def test_the_champion_plays_from_the_wheel_without_torch(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    python = _venv_reading(env_dir, _site_dirs())  # the core dependencies come from the running interpreter
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, capture_output=True,
                   timeout=300)
    blocker = tmp_path / "no_torch"  # a torch that cannot be imported, as on a machine without it
    (blocker / "torch").mkdir(parents=True)
    (blocker / "torch" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\")\n")
    work = tmp_path / "work"
    work.mkdir()
    for name in ("train.py", "agents.py"):  # a user's own scripts, named as our folders are
        (work / name).write_text("raise SystemExit('the user script ran instead of the package')\n")
    environment = {**os.environ, "PYTHONPATH": str(blocker)}
    game = subprocess.run([python, "-m", "imperiale_cli", "play", "--opponent", "champion", "--seed", "3"],
                          input="1\n" * 3000, capture_output=True, text=True, cwd=work, env=environment, timeout=300)
    assert game.returncode == 0, game.stderr
    assert "wins the game" in game.stdout and "Final score" in game.stdout
    code = (f"ENV = {str(env_dir)!r}\n"
            "import numpy as np, imperiale_agents, imperiale_env\n"
            "from imperiale_agents.base import make_agent\n"
            "from imperiale_env.batch import BatchGame\n"
            "from imperiale_train.config import make_config\n"
            "assert str(imperiale_agents.__file__).startswith(ENV), imperiale_agents.__file__\n"
            "assert make_config('champion').iterations > 0\n"
            "bot = make_agent('champion')\n"
            "g = BatchGame('academie', 8); g.reset(seed=2)\n"
            "m = g.legal_action_mask(); assert m[np.arange(8), bot.act(g.observe(), m)].all()\n"
            "print('ok')\n")
    python_use = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=work, env=environment,
                                timeout=300)
    assert python_use.returncode == 0 and python_use.stdout.strip() == "ok", python_use.stderr
