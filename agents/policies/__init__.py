"""Policies that answer a decision from the observation alone: the random and hand-written
baselines, the person at the keyboard, and trained networks (their numpy forward pass and the
files they are read from)."""
