"""Win rates of a policy against fixed agents, on duplicate deals.

Uses the agents package's tournament (:func:`agents.tournament.play_match` and
:func:`~agents.tournament.pair_stats`): every seed is played once per seating (the seats
swapped with two players, rotated with three), and the 95 % interval is paired over those
seed groups.  If the tournament module cannot be imported, a small duplicate loop of our own
over :class:`~imperiale_env.batch.BatchGame` gives the game win rate with a paired normal interval.
"""

from __future__ import annotations

import math

import numpy as np

from imperiale_env.batch import BatchGame
from imperiale_env.rules import Rules
from imperiale_env.shuffle import batch_seeds

Z95 = 1.959963984540054


def evaluate(agent, rules: Rules, opponents: tuple[str, ...] = ("random", "heuristic"), *, groups: int = 100,
             seed: int = 12345, single_deal: bool = False) -> dict[str, dict[str, float]]:
    """``{opponent: {win_rate, ci_low, ci_high, deal_win_rate, margin, games}}`` for ``agent``
    (undecided games count half)."""
    from agents.base import make_agent

    out = {}
    for k, spec in enumerate(opponents):
        opp = make_agent(spec, rules)
        try:
            from agents.tournament import pair_stats, play_match
        except ImportError:  # pragma: no cover - the tournament ships with the agents package
            out[spec] = _duplicate_games(agent, opp, rules, groups, seed + k, single_deal)
            continue
        log = play_match(rules, [agent, opp], (0, 1) if rules.players == 2 else (0, 1, 1), groups, seed, k,
                         single_deal=single_deal)
        st = pair_stats(log, 0, 1, single_deal)
        out[spec] = {"win_rate": st.game_rate, "ci_low": st.game_ci_paired[0], "ci_high": st.game_ci_paired[1],
                     "deal_win_rate": st.deal_rate, "margin": st.margin_per_deal, "games": float(st.games)}
    return out


def _duplicate_games(agent, opp, rules: Rules, groups: int, seed: int, single_deal: bool) -> dict[str, float]:
    """Fallback: ``groups`` seeds, each played with every rotation of (agent, opp, ...)."""
    P = rules.players
    n = groups * P
    seat_is_agent = np.zeros((n, P), dtype=bool)
    seat_is_agent[np.arange(n), np.arange(n) % P] = True
    bg = BatchGame(rules, n, single_deal=single_deal)
    bg.reset(np.repeat(batch_seeds(seed, groups), P))
    rng = np.random.default_rng(seed)
    actions = np.zeros(n, dtype=np.int64)
    while not bg.done.all():
        active = ~bg.done
        obs, mask = bg.observe(), bg.legal_action_mask()
        mine = seat_is_agent[np.arange(n), bg.current_player]
        for who, sel in ((agent, active & mine), (opp, active & ~mine)):
            rows = np.flatnonzero(sel)
            if len(rows):
                actions[rows] = who.act(obs[rows], mask[rows], rng)
        bg.step(actions)
    if single_deal:
        value = bg.imperiales + bg.points / 24
        best = value.max(axis=1, keepdims=True)
        top = np.isclose(value, best)
        won = np.where(top.sum(1) == 1, top.argmax(1), -1)
    else:
        won = bg.winner
    score = np.where(won < 0, 0.5, seat_is_agent[np.arange(n), np.maximum(won, 0)].astype(float))
    per_group = score.reshape(groups, P).mean(axis=1)
    rate = float(per_group.mean())
    half = Z95 * float(per_group.std(ddof=1)) / math.sqrt(groups) if groups > 1 else float("nan")
    return {"win_rate": rate, "ci_low": rate - half, "ci_high": rate + half, "deal_win_rate": float("nan"),
            "margin": float("nan"), "games": float(n)}
