"""A message sent, then each background delegation's results as the next message, until none
is pending: what a one-shot caller (``hermes run``, a cron job, an ACP prompt) uses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING

from hermes_core.agent._events import AgentEvent, ChildEvent, Finished

if TYPE_CHECKING:
    from hermes_core.agent._delegation import Conversing, Delegations


async def send_until_settled(conversation: Conversing, text: str) -> AsyncIterator[AgentEvent]:
    """Send ``text``, then each background delegation's results as the next message when they
    arrive, until none is pending (or a turn is interrupted): the events of every turn, the
    last :class:`Finished` being the answer, and between turns the children's events as they
    come (a queued child starting). What a one-shot caller (``hermes run``) uses.

    A stop while waiting between turns (:meth:`Conversing.cancel`: the children are stopped)
    starts no further turn: the last :class:`Finished` is given again as ``interrupted``, at
    once, and the children's results stay pending for the conversation's next message."""
    message: str | None = text
    while message is not None:
        last: Finished | None = None
        async for event in conversation.send(message):
            if isinstance(event, Finished):
                last = event
            yield event
        if last is None or last.stop == "interrupted":
            return
        found: list[str] = []
        async for child_event in _results_unless_stopped(
            conversation.delegations, conversation, found
        ):
            yield child_event
        message = found[0] if found else None
        if message is None and conversation.stop_requested.is_set():
            yield replace(last, stop="interrupted", detail="stopped by the user")


async def _results_unless_stopped(
    delegations: Delegations, conversation: Conversing, found: list[str]
) -> AsyncIterator[ChildEvent]:
    """The children's events as they come until the next background delegation's results
    arrive (put in ``found``), none is pending, or the conversation is stopped first (results
    taken at that moment are put back)."""
    if not delegations.pending or conversation.stop_requested.is_set():
        return
    results = asyncio.ensure_future(delegations.next_message())
    stopped = asyncio.ensure_future(conversation.stop_requested.wait())
    try:
        async for events in delegations.events_until(results, stopped):
            for event in events:
                yield event
    finally:
        stopped.cancel()
        if not results.done():
            results.cancel()  # a queue's get: cancelled before it took anything
    if not results.done() or results.cancelled():
        return
    message = results.result()
    if message is not None and conversation.stop_requested.is_set():
        delegations.put_back(message)
    elif message is not None:
        found.append(message)
