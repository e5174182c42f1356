"""Registration of the environments with Gymnasium's and PettingZoo's registries (on import of
:mod:`imperiale_env`; the entry points are strings, so nothing heavy is imported here).

* ``gymnasium.make("Imperiale-v1", ...)``: :class:`imperiale_env.envs.gym_env.ImperialeEnv`, one seat
  against a fixed opponent;
* ``gymnasium.make_vec("ImperialeSelfPlay-v1", num_envs=N, ...)``:
  :class:`imperiale_env.envs.vector_env.ImperialeVectorEnv`, N self-play games in numpy;
* ``pettingzoo.make("aec", "imperiale/imperiale_v1", ...)``: :func:`imperiale_env.envs.aec.env`.

The version is the observation's (:data:`~imperiale_env.core.observation.OBS_VERSION`), and so are
the ids.  The ids of every earlier version (``PAST_VERSIONS``: version 0 observed 485 floats) stay
registered to refuse with the reason and the id to use instead: code written for them feeds a
network the old observation, and a silent switch would train on the wrong inputs.

Importing :mod:`imperiale_env` must stay light (a leaf module such as ``imperiale_env.core.cards``
must not pull in Gymnasium or PettingZoo), so :func:`register_when_imported` registers with a
library at once if it is already imported, and otherwise as soon as it is: a one-shot import
hook runs the registration right after the library's own module has loaded.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

from imperiale_env.core.observation import OBS_SIZE, OBS_VERSION, PAST_VERSIONS


def env_ids(version: int) -> tuple[str, str, str]:
    """The Gymnasium, Gymnasium vector and PettingZoo ids of observation version ``version``."""
    return f"Imperiale-v{version}", f"ImperialeSelfPlay-v{version}", f"imperiale/imperiale_v{version}"


GYM_ID, GYM_VECTOR_ID, PETTINGZOO_ID = env_ids(OBS_VERSION)
#: The ids of every earlier observation version -> the id that replaces each.
RETIRED = {old: new for version in PAST_VERSIONS for old, new in zip(env_ids(version), env_ids(OBS_VERSION),
                                                                      strict=True)}
_VERSION_OF = {old: version for version in PAST_VERSIONS for old in env_ids(version)}


class RetiredEnvError(ValueError):
    """An environment id of an observation version this release no longer produces."""


def _retired(old: str):
    """The entry point of a retired id: refuses, naming the id that replaces it."""

    def refuse(*args, **kwargs):
        version = _VERSION_OF[old]
        raise RetiredEnvError(
            f"{old} observed version {version} ({PAST_VERSIONS[version]}), which this release no longer produces; "
            f"use {RETIRED[old]}: observation version {OBS_VERSION}, {OBS_SIZE} bytes (uint8), the layout in "
            f"docs/observation.md. Policies trained on version {version} must be retrained.")

    return refuse


def register_envs() -> None:
    """Register every environment once (calling it again changes nothing); imports both libraries."""
    _register_gymnasium()
    _register_pettingzoo()


def _register_gymnasium() -> None:
    import gymnasium

    if GYM_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_ID, entry_point="imperiale_env.envs.gym_env:ImperialeEnv")
    if GYM_VECTOR_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_VECTOR_ID, vector_entry_point="imperiale_env.envs.vector_env:ImperialeVectorEnv")
    for old in (old for old in RETIRED if "/" not in old):
        if old not in gymnasium.registry:
            gymnasium.register(id=old, entry_point=_retired(old), vector_entry_point=_retired(old))


def _register_pettingzoo() -> None:
    import pettingzoo

    register = getattr(pettingzoo, "register", None)  # pettingzoo >= 1.27 has a registry
    if register is not None and PETTINGZOO_ID not in pettingzoo.aec_registry:
        register("aec", PETTINGZOO_ID, entry_point="imperiale_env.envs.aec:env")
        for old in (old for old in RETIRED if "/" in old):
            register("aec", old, entry_point=_retired(old))


_REGISTER = {"gymnasium": _register_gymnasium, "pettingzoo": _register_pettingzoo}


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the real loader of one library so that the registration
    runs once that library's module has executed, then leaves ``sys.meta_path``.

    It stays on ``sys.meta_path`` until the library is really loaded: a mere probe
    (``importlib.util.find_spec("gymnasium")``, which other libraries call to see what is
    installed) finds a spec without executing it, and the import that follows must still be seen."""

    def __init__(self, name: str):
        self.name = name
        self._looking = False

    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name or self._looking:
            return None
        self._looking = True  # the real finders below us answer the question
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._looking = False
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module
        register = _REGISTER[fullname]

        def exec_module(module: ModuleType) -> None:
            load(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            register()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def register_when_imported() -> None:
    """Register with Gymnasium and PettingZoo now if they are imported, else when they are."""
    for name, register in _REGISTER.items():
        if name in sys.modules:
            register()
        elif not any(isinstance(f, _RegisterAfterImport) and f.name == name for f in sys.meta_path):
            sys.meta_path.insert(0, _RegisterAfterImport(name))
