"""What a conversation has spent and how full its context is: ``/usage`` of ``hermes chat`` and
of an ACP session.

The model requests and tokens are those of the conversation's budgets added up
(:attr:`~hermes_core.agent.Conversation.budgets`: a turn's, or a ``/compact``'s), so its
subagents' are included, as the stop line and the limits count them, also those of a
background subagent still running. The context is the next request's estimate
(:meth:`~hermes_core.agent._compaction.Compaction.estimate`: the system prompt, the tools'
schemas, the messages) against ``model.context_length``, and where compaction starts
(``agent.compact_at`` of it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core.agent._wire import Usage

if TYPE_CHECKING:
    from hermes_core.agent._conversation import Conversation


@dataclass(frozen=True)
class ConversationUsage:
    """A conversation's ``requests`` and ``usage`` so far, the estimated tokens of its next
    request (``estimate``), its model's window (``window``) and the share of it past which it
    is compacted (``compact_at``; ``None``: only when the server refuses a request)."""

    requests: int
    usage: Usage
    estimate: int
    window: int
    compact_at: float | None

    @classmethod
    def of(cls, conversation: Conversation) -> ConversationUsage:
        """``conversation``'s, now."""
        agent = conversation.agent
        usage = sum((budget.usage for budget in conversation.budgets), Usage())
        tools = agent.tool_schemas(conversation.session)
        return cls(
            requests=sum(budget.turns for budget in conversation.budgets),
            usage=usage,
            estimate=conversation.compaction.estimate(tools),
            window=agent.model.context_length,
            compact_at=agent.limits.compact_at or None,
        )

    def lines(self) -> list[str]:
        """What ``/usage`` says, a line each: the requests and tokens, then the context."""
        used = self.usage
        noun = "request" if self.requests == 1 else "requests"
        cached = f" ({used.cached_tokens:,} of them cached)" if used.cached_tokens else ""
        share = self.estimate / self.window if self.window else 0.0
        context = (
            f"context: the next request is about {self.estimate:,} tokens of the model's "
            f"{self.window:,} (model.context_length), {share:.0%}"
        )
        if self.compact_at is None:
            context += "; compacted only when the server refuses a request (agent.compact_at)"
        else:
            start = int(self.compact_at * self.window)
            context += f"; compacted past {start:,} ({self.compact_at:.0%}, agent.compact_at)"
        none = used.unreported
        counted = f"{used.input_tokens:,} input tokens{cached}, "
        counted += f"{used.output_tokens:,} output tokens"
        if none and not used.total:
            counted = "tokens not reported"  # a 0 would be a count no server made
        elif none:
            counted = f"at least {counted}: {none} request{'s' if none != 1 else ''} reported none"
        return [
            f"this conversation: {self.requests} model {noun}, {counted} (subagents' included)",
            context,
        ]
