"""Self-play training: configurations, rollout collection, learning updates, checkpoints and logging."""
