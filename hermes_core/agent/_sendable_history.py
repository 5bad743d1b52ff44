"""What a stored history needs to be sent again: the messages an undo record leaves
(:func:`before_user_message`), no tool result without its call (:func:`results_with_their_calls`)
and a failed result for a call the session ended in the middle of
(:func:`unfinished_calls_answered`): the model APIs refuse a history that breaks the pairing."""

from __future__ import annotations

from collections.abc import Sequence

from hermes_core.agent._wire import Message, ModelToolCall

__all__ = ["before_user_message", "results_with_their_calls", "unfinished_calls_answered"]


def before_user_message(messages: list[Message], count: object) -> list[Message]:
    """``messages`` up to their ``count``-th user message from the end, without it (all of them
    when they hold fewer): what an undo record leaves (:meth:`Transcript.undone`). Counted in
    user messages, which the history and the messages read end with alike (the failed results
    the history adds for calls left unanswered are tool messages)."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"an undo record's user_messages is a count from 1, not {count!r}")
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        seen += messages[index].role == "user"
        if seen == count:
            return messages[:index]
    return messages


def results_with_their_calls(messages: Sequence[Message]) -> list[Message]:
    """``messages`` without a tool result that answers no call of the assistant message before
    it (only other results between them): a compaction record edited by hand, or appended by
    another process taking the conversation up at the same time, may keep one, and the model
    APIs refuse a history with a result whose call is not there."""
    kept: list[Message] = []
    calls: set[str] = set()
    for message in messages:
        if message.role == "tool" and message.tool_call_id not in calls:
            continue
        if message.role == "tool":
            calls.discard(message.tool_call_id)
        else:
            calls = {call.id for call in message.tool_calls}
        kept.append(message)
    return kept


def unfinished_calls_answered(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with a failed result for each tool call that has none, right after the
    results its assistant message has: the session ended in the middle of the call (the
    process was killed, the editor quit while it was asked or ran), and the model APIs refuse
    a history with a call left unanswered. The transcript itself is left as it is."""
    answered: list[Message] = []
    open_calls: list[ModelToolCall] = []
    for message in messages:
        if message.role == "tool":
            open_calls[:] = [call for call in open_calls if call.id != message.tool_call_id]
        else:
            answered.extend(_unfinished(call) for call in open_calls)
            open_calls.clear()
        answered.append(message)
        if message.role == "assistant":
            open_calls.extend(message.tool_calls)
    answered.extend(_unfinished(call) for call in open_calls)
    return answered


def _unfinished(call: ModelToolCall) -> Message:
    return Message(
        role="tool",
        content=f"{call.name} did not finish: the session ended before its result was kept "
        "(it may not have run, or run only in part).",
        tool_call_id=call.id,
        name=call.name,
        is_error=True,
    )
