"""Registration of the environments with Gymnasium's and PettingZoo's registries (on import of
:mod:`imperiale_env`; the entry points are strings, so nothing heavy is imported here).

* ``gymnasium.make("Imperiale-v0", ...)``: :class:`imperiale_env.gym_env.ImperialeEnv`, one seat
  against a fixed opponent;
* ``gymnasium.make_vec("ImperialeSelfPlay-v0", num_envs=N, ...)``:
  :class:`imperiale_env.vector_env.ImperialeVectorEnv`, N self-play games in numpy;
* ``pettingzoo.make("aec", "imperiale/imperiale_v0", ...)``: :func:`imperiale_env.aec.env`.
"""

from __future__ import annotations

GYM_ID = "Imperiale-v0"
GYM_VECTOR_ID = "ImperialeSelfPlay-v0"
PETTINGZOO_ID = "imperiale/imperiale_v0"


def register_envs() -> None:
    """Register every environment once (calling it again changes nothing)."""
    import gymnasium

    if GYM_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_ID, entry_point="imperiale_env.gym_env:ImperialeEnv")
    if GYM_VECTOR_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_VECTOR_ID, vector_entry_point="imperiale_env.vector_env:ImperialeVectorEnv")
    import pettingzoo

    register = getattr(pettingzoo, "register", None)  # pettingzoo >= 1.27 has a registry
    if register is not None and PETTINGZOO_ID not in pettingzoo.aec_registry:
        register("aec", PETTINGZOO_ID, entry_point="imperiale_env.aec:env")
