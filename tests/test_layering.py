"""Layering: leaf modules import light, and the packages import each other in one direction.

The import graph is read from the source with ``ast``: every ``import`` statement, those inside
functions and ``TYPE_CHECKING`` blocks too, so a cycle cannot hide behind a lazy import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Repository folder -> installed package name (pyproject's package-dir).
PACKAGES = {"imperiale_env": "imperiale_env", "agents": "imperiale_agents", "train": "imperiale_train",
            "imperiale_web": "imperiale_web", "imperiale_cli": "imperiale_cli"}
#: The layers, bottom first: a module may import its own layer and those below, never above.
LAYERS = ("imperiale_env.core", ("imperiale_env.kernels", "imperiale_env.reference"), "imperiale_env.batch",
          "imperiale_env.records", "imperiale_env.envs", "imperiale_env", "imperiale_agents", "imperiale_train",
          "imperiale_web", "imperiale_cli")


def _modules() -> dict[str, Path]:
    found = {}
    for folder, name in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [name, *path.relative_to(ROOT / folder).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every module of ours that ``path`` imports anywhere (``from pkg import mod`` counts as ``pkg.mod``)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
            out |= subs or {node.module}
            if len(subs) < len(node.names):
                out.add(node.module)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: {d for d in _imports(p, modules) if d in modules and d != m} for m, p in modules.items()}


def _layer(module: str) -> int:
    for rank, layer in enumerate(LAYERS):
        names = layer if isinstance(layer, tuple) else (layer,)
        if any(module == n or module.startswith(n + ".") for n in names if n != "imperiale_env") or module == layer:
            return rank
    return LAYERS.index("imperiale_env")  # imperiale_env's own top-level modules (the package, openspiel)


def test_no_module_imports_a_layer_above_its_own():
    offenders = [f"{m} -> {d}" for m, deps in _graph().items() for d in deps if _layer(d) > _layer(m)]
    assert offenders == []


def test_no_import_cycle_between_or_inside_packages():
    graph, state, cycles = _graph(), {}, []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for dep in sorted(graph[module]):
            if state.get(dep) == "open":
                cycles.append(" -> ".join(path[path.index(dep):] + [dep]))
            elif dep not in state:
                visit(dep, path + [dep])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_nothing_imports_the_folder_names_agents_or_train():
    """Code, tests and benchmarks import ``imperiale_agents`` and ``imperiale_train``: a user's own
    ``train.py`` or another distribution's ``agents`` package can never stand in for ours."""
    offenders = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        if ".venv" in path.parts or "build" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in ("agents", "train")]
    assert offenders == []


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_a_leaf_module_does_not_import_the_environment_libraries():
    loaded = _modules_after("import imperiale_env.core.cards, imperiale_env.core.rules, imperiale_env.reference.game")
    assert "imperiale_env.core.cards" in loaded
    assert not {"gymnasium", "pettingzoo", "imperiale_env.envs.aec", "imperiale_agents", "imperiale_train",
                "torch"} & loaded


def test_the_environments_register_when_gymnasium_comes_after_or_before():
    after = "import imperiale_env, gymnasium; gymnasium.make('Imperiale-v1'); print(imperiale_env.env)"
    before = "import gymnasium, imperiale_env; gymnasium.make_vec('ImperialeSelfPlay-v1', num_envs=2)"
    assert "gymnasium" in _modules_after(after) and "gymnasium" in _modules_after(before)
    # a library that only asks whether gymnasium is installed (TorchRL does) takes nothing away
    probed = ("import imperiale_env, importlib.util; importlib.util.find_spec('gymnasium'); "
              "importlib.util.find_spec('pettingzoo'); import gymnasium, pettingzoo; gymnasium.make('Imperiale-v1'); "
              "from pettingzoo.utils.env import AECEnv; import imperiale_env.envs.registration")
    assert "gymnasium" in _modules_after(probed)


def test_agents_do_not_import_training_code_on_import():
    loaded = _modules_after(
        "import imperiale_agents.base, imperiale_agents.tournament.match, imperiale_agents.policies.heuristic")
    assert not {m for m in loaded if m == "imperiale_train" or m.startswith("imperiale_train.")}
