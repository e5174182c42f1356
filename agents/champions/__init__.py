"""The shipped champions: one small trained policy per rules preset, inside the package.

A champion is the file ``agents/champions/PRESET.npz``, an exported policy
(:mod:`imperiale_agents.policies.policy_file`: the network's weights, the rules it was trained under and how
it was trained; no optimiser or game state), read with ``np.load(allow_pickle=False)`` so that
loading it runs no code, and played by a numpy forward pass: no torch needed.  It plays as the agent
spec ``champion`` (the champion of the rules being played), built by
:func:`imperiale_agents.base.make_agent` and so usable wherever an agent is named:
``imperiale play --opponent champion``, ``imperiale eval --agents champion,heuristic``, the web
table, and from Python (``imperiale_agents.champion("academie")``, which is the opponent to give
``gymnasium.make("Imperiale-v1", opponent=...)``).

Which presets have one is whatever files are here (:func:`champion_presets`), so that shipping
a champion for another preset is adding its file (docs/ladder.md gives the command).

The **search champion**, spec ``champion:search``, is the strongest search agent of a preset within
20 ms a decision: an agent spec of its own (:data:`SEARCH_CHAMPIONS`), chosen by the duplicate-deal
comparisons of docs/champion.md, which say what it beats and by how much.
"""

from __future__ import annotations

from pathlib import Path

from imperiale_env.core.rules import PRESET_NAMES

CHAMPIONS_DIR = Path(__file__).resolve().parent
"""Where the champion files live: ``PRESET.npz`` for each preset that has one."""


def champion_presets() -> tuple[str, ...]:
    """The presets that have a shipped champion, in the order of :data:`PRESET_NAMES`."""
    return tuple(p for p in PRESET_NAMES if (CHAMPIONS_DIR / f"{p}.npz").is_file())


def champion_path(preset: str) -> Path | None:
    """The champion file of ``preset`` (a preset name), ``None`` if it has none."""
    path = CHAMPIONS_DIR / f"{preset}.npz"
    return path if preset in PRESET_NAMES and path.is_file() else None


#: The spec each preset's ``champion:search`` plays (docs/champion.md: why this one).
SEARCH_CHAMPIONS: dict[str, str] = {"academie": "pimc:128:belief", "foster": "pimc:128:belief",
                                     "imperijal": "pimc:128:belief"}
