"""Taking back the person's last message: ``/undo`` and ``/retry`` of ``hermes chat``.

The person's last message is the conversation's last user message that is theirs: neither a
compaction's summary (:func:`~hermes_core.agent._compaction.replaces_earlier`) nor a background
delegation's results, sent as a message for them
(:data:`~hermes_core.agent._delegation.RESULTS_HEADER`). Taking it back drops it and every
message after it (the model's answers, its tool calls and their results, a delegation's
results), from the conversation and, by an undo record
(:meth:`~hermes_core.agent._transcripts.Transcript.undone`), from what its transcript reads
back: a conversation taken up again starts where the chat left it. A background delegation
started by a call taken back is stopped, its results sent by none (they would come as a
message for a conversation that no longer asked for them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core.agent._compaction import replaces_earlier
from hermes_core.agent._delegation import RESULTS_HEADER
from hermes_core.agent._sendable_history import before_user_message

if TYPE_CHECKING:
    from hermes_core.agent._conversation import Conversation
    from hermes_core.agent._wire import Message

_RESULTS = re.compile(re.escape(RESULTS_HEADER).replace(re.escape("{}"), r"\S+"))
_STARTED = re.compile(r"Delegation (d\d+) started: ")


class NothingToTakeBack(Exception):
    """The conversation holds no message of the person's to take back; the message says why."""


@dataclass(frozen=True)
class TakenBack:
    """The person's message taken back (``text``), how many messages left the conversation
    with it (``dropped``, the message included) and the background delegations they had
    started that were stopped or whose results were dropped (``delegations``)."""

    text: str
    dropped: int
    delegations: tuple[str, ...] = ()


def theirs(message: Message) -> bool:
    """Whether ``message`` is one the person sent (see the module)."""
    return (
        message.role == "user"
        and not replaces_earlier(message)
        and _RESULTS.match(message.content) is None
    )


def last_said(messages: Sequence[Message]) -> int | None:
    """Where the person's last message is in ``messages``; ``None`` when there is none after
    the last compaction's summary."""
    for index in range(len(messages) - 1, -1, -1):
        if theirs(messages[index]):
            return index
        if replaces_earlier(messages[index]):
            return None
    return None


def take_back(conversation: Conversation) -> TakenBack:
    """Drop the person's last message and what followed it from ``conversation`` and from its
    transcript; :class:`NothingToTakeBack` when there is none."""
    messages = conversation.messages
    index = last_said(messages)
    if index is None:
        if any(replaces_earlier(message) for message in messages):
            why = "your last message is part of the summary the conversation was compacted into"
        else:
            why = "you have sent no message in this conversation yet"
        raise NothingToTakeBack(why)
    users = sum(message.role == "user" for message in messages[index:])
    taken = messages[index]
    kept = before_user_message(messages, users)
    started = {
        match.group(1)
        for message in messages[len(kept) :]
        if message.role == "tool" and (match := _STARTED.match(message.content))
    }
    dropped = len(messages) - len(kept)
    messages[:] = kept
    if (transcript := conversation.transcript()) is not None:
        transcript.undone(users)
    stopped = conversation.delegations.take_back(started) if started else []
    return TakenBack(taken.content, dropped, tuple(stopped))
