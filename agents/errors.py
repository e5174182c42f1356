"""The agents' one error type, in a module of its own so that every agent module can raise it
without importing the registry (which imports them)."""


class AgentError(ValueError):
    """An agent spec that cannot be built, or an agent that cannot go on; the message says what
    is wrong and what is allowed."""
