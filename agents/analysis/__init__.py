"""Analysis for people: every decision of a game record valued by the solver, and the belief
model's view of a decision in words and numbers."""
