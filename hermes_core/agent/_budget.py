"""The limits of a conversation, or of a whole delegation tree: turns, tokens and wall time.

One :class:`Budget` is spent by every model request of the conversation that made it and of
the children it delegates to, so a tree can never cost more than its root was allowed. Each
limit, when reached, is named in the turn's end (``max_turns``, ``max_tokens``,
``max_seconds``), with the partial answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hermes_core._config.agent import AgentConfig
from hermes_core.agent._events import StopReason
from hermes_core.agent._wire import Usage


@dataclass
class Budget:
    """What a conversation (and its children) may still spend; ``None``: no limit."""

    max_turns: int | None = None
    max_tokens: int | None = None
    max_seconds: float | None = None
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def from_config(cls, config: AgentConfig) -> Budget:
        """The budget the ``agent`` section allows."""
        return cls(config.max_turns, config.max_tokens, config.max_seconds)

    def spend_turn(self) -> None:
        """Count one model request."""
        self.turns += 1

    def spend(self, usage: Usage) -> None:
        """Count the tokens of one model request."""
        self.usage = self.usage + usage

    def remaining_turns(self) -> int | None:
        """Model requests left before ``max_turns`` (``None``: no turn limit)."""
        return None if self.max_turns is None else self.max_turns - self.turns

    def remaining_seconds(self) -> float | None:
        """Seconds left before ``max_seconds`` (``None``: no time limit)."""
        if self.max_seconds is None:
            return None
        return self.max_seconds - (time.monotonic() - self.started)

    def exhausted(self) -> tuple[StopReason, str] | None:
        """The limit reached, and its words, or ``None`` while there is budget left."""
        if self.max_turns is not None and self.turns >= self.max_turns:
            return "max_turns", f"the limit of {self.max_turns} model turns was reached"
        if self.max_tokens is not None and self.usage.total >= self.max_tokens:
            return "max_tokens", (
                f"the limit of {self.max_tokens} tokens was reached ({self.usage.total} used)"
            )
        left = self.remaining_seconds()
        if left is not None and left <= 0:
            return self.out_of_time()
        return None

    def out_of_time(self) -> tuple[StopReason, str]:
        """The time limit, in the words :meth:`exhausted` gives it."""
        return "max_seconds", f"the time limit of {self.max_seconds:g} s was reached"
