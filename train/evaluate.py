"""Win rates of a policy against fixed agents, on duplicate deals.

Uses the agents package's tournament (:func:`imperiale_agents.tournament.match.play_match` and
:func:`~imperiale_agents.tournament.stats.pair_stats`): every seed is played once per seating (the seats
swapped with two players, rotated with three), and the 95 % interval is paired over those
seed groups.
"""

from __future__ import annotations

from imperiale_agents.base import make_agent
from imperiale_agents.tournament.match import play_match
from imperiale_agents.tournament.stats import pair_stats
from imperiale_env.core.rules import Rules


def evaluate(agent, rules: Rules, opponents: tuple[str, ...] = ("random", "heuristic"), *, groups: int = 100,
             seed: int = 12345, single_deal: bool = False) -> dict[str, dict[str, float]]:
    """``{opponent: {win_rate, ci_low, ci_high, deal_win_rate, margin, games}}`` for ``agent``
    (undecided games count half)."""
    out = {}
    for k, spec in enumerate(opponents):
        opp = make_agent(spec, rules)
        log = play_match(rules, [agent, opp], (0, 1) if rules.players == 2 else (0, 1, 1), groups, seed, k,
                         single_deal=single_deal)
        st = pair_stats(log, 0, 1, single_deal)
        out[spec] = {"win_rate": st.game_rate, "ci_low": st.game_ci_paired[0], "ci_high": st.game_ci_paired[1],
                     "deal_win_rate": st.deal_rate, "margin": st.margin_per_deal, "games": float(st.games)}
    return out
