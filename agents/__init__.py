"""Agents that play L'Impériale: rule-based baselines and learned policies, behind one interface
used by the environments, tournaments and interactive play."""
