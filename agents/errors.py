"""The agents' one error type, in a module of its own so that every agent module can raise it
without importing the registry (which imports them)."""


class AgentError(ValueError):
    """An agent spec that cannot be built, or an agent that cannot go on; the message says what
    is wrong and what is allowed."""


class AgentMisbehaved(AgentError):
    """What an agent did wrong while playing: an answer that is not one legal action id a game, or
    (for a user's agent) an exception or exit in its code; the message names the agent and the game."""
