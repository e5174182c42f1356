"""The scalar reference engine: one game written to read like the rules, the oracle every faster
path is checked against, with the observation of one seat and what a player at it may see."""
