"""The environments over the engines: PettingZoo AEC, Gymnasium single-seat and vector envs,
their registration, renderers and the RLlib adapter."""
