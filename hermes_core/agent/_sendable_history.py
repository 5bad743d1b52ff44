"""What a stored history needs to be sent again: the messages an undo record leaves
(:func:`before_user_message`), no tool result without its call (:func:`results_with_their_calls`)
and a failed result for a call the session ended in the middle of
(:func:`unfinished_calls_answered`): the model APIs refuse a history that breaks the pairing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from hermes_core.agent._wire import Message, ModelToolCall

__all__ = [
    "before_user_message",
    "each_call_answered",
    "each_with_its_call",
    "kept_before_user_message",
    "results_with_their_calls",
    "unfinished_calls_answered",
]


def before_user_message(messages: list[Message], count: object) -> list[Message]:
    """``messages`` up to their ``count``-th user message from the end, without it (all of them
    when they hold fewer): what an undo record leaves (:meth:`Transcript.undone`). Counted in
    user messages, which the history and the messages read end with alike (the failed results
    the history adds for calls left unanswered are tool messages)."""
    return messages[: kept_before_user_message([m.role == "user" for m in messages], count)]


def kept_before_user_message(users: Sequence[bool | int], count: object) -> int:
    """How many of a history's messages an undo record of ``count`` keeps
    (:func:`before_user_message`), ``users`` saying which of them are the person's (a history
    known by its messages' places only: ``hermes sessions show`` streaming one)."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"an undo record's user_messages is a count from 1, not {count!r}")
    seen = 0
    for index in range(len(users) - 1, -1, -1):
        seen += bool(users[index])
        if seen == count:
            return index
    return len(users)


def results_with_their_calls(messages: Iterable[Message]) -> list[Message]:
    """``messages`` without a tool result that answers no call of the assistant message before
    it (only other results between them): a compaction record edited by hand, or appended by
    another process taking the conversation up at the same time, may keep one, and the model
    APIs refuse a history with a result whose call is not there."""
    return list(each_with_its_call(messages))


def each_with_its_call(messages: Iterable[Message]) -> Iterator[Message]:
    """:func:`results_with_their_calls`, a message at a time."""
    calls: set[str] = set()
    for message in messages:
        if message.role == "tool" and message.tool_call_id not in calls:
            continue
        if message.role == "tool":
            calls.discard(message.tool_call_id)
        else:
            calls = {call.id for call in message.tool_calls}
        yield message


def unfinished_calls_answered(messages: Iterable[Message]) -> list[Message]:
    """``messages`` with a failed result for each tool call that has none, right after the
    results its assistant message has: the session ended in the middle of the call (the
    process was killed, the editor quit while it was asked or ran), and the model APIs refuse
    a history with a call left unanswered. The transcript itself is left as it is."""
    return list(each_call_answered(messages))


def each_call_answered(messages: Iterable[Message]) -> Iterator[Message]:
    """:func:`unfinished_calls_answered`, a message at a time."""
    open_calls: list[ModelToolCall] = []
    for message in messages:
        if message.role == "tool":
            open_calls[:] = [call for call in open_calls if call.id != message.tool_call_id]
        else:
            yield from (_unfinished(call) for call in open_calls)
            open_calls.clear()
        yield message
        if message.role == "assistant":
            open_calls.extend(message.tool_calls)
    yield from (_unfinished(call) for call in open_calls)


def _unfinished(call: ModelToolCall) -> Message:
    return Message(
        role="tool",
        content=f"{call.name} did not finish: the session ended before its result was kept "
        "(it may not have run, or run only in part).",
        tool_call_id=call.id,
        name=call.name,
        is_error=True,
    )
