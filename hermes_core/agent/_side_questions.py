"""A session's model, for a tool that asks it a side question (``session_search`` summarizing
the sessions it found): one request without tools, bounded in tokens, through the provider of
the conversation the session belongs to, its usage spent from that conversation's budget.

The agent attaches it to every session it converses in (:func:`attach_side_questions`); a tool
finds it with :func:`side_questions_of` (``None`` outside an agent's conversation: ``hermes
tools call``, ``hermes serve``), as ``clarify`` finds the session's question transport.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from hermes_core.agent._wire import Message, ModelProvider, ModelRequest, ModelTurn

if TYPE_CHECKING:
    from hermes_core._session import Session
    from hermes_core.agent._budget import Budget
    from hermes_core.agent._requests import RetryPolicy

_STATE_KEY: Final = "agent.side_questions"


@dataclass(frozen=True)
class SideQuestions:
    """Asks the conversation's model one question at a time, apart from the conversation."""

    provider: ModelProvider
    model: str
    retry: RetryPolicy
    budget: Budget

    async def ask(self, system: str, question: str, max_tokens: int) -> str:
        """The model's answer to ``question`` under ``system``, at most ``max_tokens`` long
        (no tools offered); raises :class:`~hermes_core.agent._wire.ModelError` when the
        request fails."""
        from hermes_core.agent._requests import request_events

        request = ModelRequest(
            model=self.model,
            system=system,
            messages=(Message("user", question),),
            max_tokens=max_tokens,
        )
        turn: ModelTurn | None = None
        async for event in request_events(
            self.provider, request, self.retry, asyncio.Event(), None
        ):
            if isinstance(event, ModelTurn):
                turn = event
        if turn is None:
            return ""
        if turn.usage is not None:
            self.budget.spend(turn.usage)
        return turn.message.content


def attach_side_questions(session: Session, questions: SideQuestions) -> None:
    """Let the tools of ``session`` ask its model side questions."""
    session.state[_STATE_KEY] = questions


def side_questions_of(session: Session) -> SideQuestions | None:
    """The side questions of ``session``'s model, or ``None`` outside an agent's conversation."""
    found = session.state.get(_STATE_KEY)
    return found if isinstance(found, SideQuestions) else None
