"""The AEC environment under the name PettingZoo's classic games use (``chess_v6``, ``go_v5``)::

    from imperiale_env import imperiale_v1

    env = imperiale_v1.env(rules="academie", render_mode="ansi")

The same objects as :mod:`imperiale_env.envs.aec` (documented there); the suffix is the
observation's version, as in the registered ids (``imperiale/imperiale_v1``, ``Imperiale-v1``).
"""

from imperiale_env.envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
