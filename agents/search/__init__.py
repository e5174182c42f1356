"""Search: the exact play-out solvers (pure Python, the compiled one's oracle; compiled), Perfect
Information Monte Carlo over sampled deals, its declarations by sampled deals, information-set MCTS,
the worlds weighed by how likely the opponent's plays were, and the learned belief model that
draws them."""
