"""Agents that play L'Impériale: rule-based baselines and learned policies, behind one interface
used by the environments, tournaments and interactive play.

- :mod:`imperiale_agents.base`: the :class:`~imperiale_agents.base.Agent` protocol (batched ``act(obs, mask, rng)``)
  and :func:`~imperiale_agents.base.make_agent` (``random``, ``heuristic``, ``pimc[:N[:K]]``, ``neural:PATH``,
  ``champion``);
- :mod:`imperiale_agents.champions`: the trained policies shipped in the package, one per preset that has
  one (:func:`champion`);
- :mod:`imperiale_agents.policies.random_agent`, :mod:`imperiale_agents.policies.heuristic`: the baselines;
- :mod:`imperiale_agents.search.solver`, :mod:`imperiale_agents.search.compiled_solver`,
  :mod:`imperiale_agents.search.pimc`: the exact play-out solver (pure Python, compiled) and Perfect
  Information Monte Carlo over sampled deals;
  :mod:`imperiale_agents.search.declaration_search`: its declarations by sampled deals (``pimc:N:search``);
- :mod:`imperiale_agents.observation_view`: decoding the observation vector;
- :mod:`imperiale_agents.tournament.match`: duplicate round robins (``imperiale eval``).
"""


def champion(rules=None):
    """The shipped champion of ``rules`` (a preset name, :class:`~imperiale_env.core.rules.Rules` or
    dict; default ``academie``): ``make_agent("champion", rules)``, a greedy trained policy.
    A preset without a champion raises :class:`~imperiale_agents.base.AgentError` naming those with one.
    Plays without torch (numpy).  It is also the opponent to give the single-agent environment::

        env = gymnasium.make("Imperiale-v1", rules="academie", opponent=imperiale_agents.champion("academie"))
    """
    from imperiale_agents.base import make_agent

    return make_agent("champion", rules)
