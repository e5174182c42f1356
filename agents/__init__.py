"""Agents that play L'Impériale: rule-based baselines and learned policies, behind one interface
used by the environments, tournaments and interactive play.

- :mod:`agents.base`: the :class:`~agents.base.Agent` protocol (batched ``act(obs, mask, rng)``)
  and :func:`~agents.base.make_agent` (``random``, ``heuristic``, ``pimc[:N[:K]]``, ``neural:PATH``);
- :mod:`agents.random_agent`, :mod:`agents.heuristic`: the baselines;
- :mod:`agents.solver`, :mod:`agents.compiled_solver`, :mod:`agents.pimc`: the exact play-out
  solver (pure Python, compiled) and Perfect Information Monte Carlo over sampled deals;
  :mod:`agents.declaration_search`: its declarations by sampled deals (``pimc:N:search``);
- :mod:`agents.view`: decoding the observation vector;
- :mod:`agents.tournament`: duplicate round robins (``imperiale eval``).
"""
