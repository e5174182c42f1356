"""``load_agent(path, rules)``: the hook :func:`agents.base.make_agent` uses for ``neural:PATH``.

A checkpoint that cannot be loaded raises :class:`agents.base.AgentError` (what the
``imperiale eval`` command reports as a clean error), with the checkpoint loader's message.
"""

from __future__ import annotations


def load_agent(path, rules=None, greedy: bool = True):
    from agents.base import AgentError
    from agents.neural import NeuralAgent

    from .checkpoint import CheckpointError

    try:
        return NeuralAgent(path, greedy=greedy, rules=rules)
    except CheckpointError as exc:
        raise AgentError(f"neural:{path}: {exc}") from None
