"""Parallel work for the agents: worker processes that report a dead worker, connecting to Ray,
and tournaments spread over a Ray cluster."""
