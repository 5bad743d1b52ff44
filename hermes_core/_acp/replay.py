"""``session/load``: a conversation's transcript told back to the client as updates.

The loop keeps every message of a session in its transcript
(``$HERMES_HOME/sessions/<id>.jsonl``, redacted). Loading reads those messages back into the
conversation (the model sees the history as it was stored: secrets stay redacted) and sends
the client each of them: the person's messages as ``user_message_chunk``, the model's as
``agent_message_chunk``, each tool call as a finished ``tool_call`` shown as the live turn
showed it (:func:`~hermes_core._acp.toolcalls.call_start`: kind, title, locations, an edit's
diff, a command's line), then its result. What the transcript does not keep is not invented:
a write that replaced a file shows the text written and says its earlier text was not kept;
one that failed shows the text it was to write, saying that it failed, above its error.

The messages are told as they are read, one at a time (a transcript compacted many times is
never held whole): a call is told with the result that followed it, and only the calls still
waiting for theirs are kept.

A compacted session is told as the person saw it (every message of the transcript), then a
thought saying that the model goes on from the summary (:func:`compaction_thought`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hermes_core._acp.toolcalls import Earlier, call_start
from hermes_core.agent._compaction import replaces_earlier
from hermes_core.agent._events import real_tools
from hermes_core.agent._wire import Message, ModelToolCall


def _earlier(call: ModelToolCall, result: Message | None) -> Earlier:
    """What is known of the file a ``write_file`` replaced: nothing (the transcript keeps no
    file's text), unless the write created it, as its result says (``created notes.md (8
    bytes)``): then there was none, and the diff is the one shown live. A write the bridge's
    ``tool_call`` carried is judged as a direct one: its result is the write's own."""
    if (
        real_tools(call) == ("write_file",)
        and result is not None
        and not result.is_error
        and result.content.startswith("created ")
    ):
        return lambda _path: None
    return None


def replayed(messages: Iterable[Message], cwd: Path) -> Iterator[Any]:
    """The updates that tell ``messages`` again, in order, read one at a time. A call is told
    with its result, the ``tool`` message after its assistant message and before the next
    message of another role (each call has one: ``each_call_answered``); only the open calls'
    results are kept meanwhile, so that a long transcript is never held whole."""
    from acp import update_agent_message_text, update_user_message_text

    numbers = itertools.count(1)
    calls: Sequence[ModelToolCall] = ()  # the last assistant message's, told once answered
    results: dict[str, Message] = {}
    for message in messages:
        if message.role == "tool":
            if any(call.id == message.tool_call_id for call in calls):
                results[message.tool_call_id] = message
            continue
        yield from _told(calls, results, numbers, cwd)
        calls, results = (), {}
        if message.role == "user" and message.content:
            yield update_user_message_text(message.content)
        elif message.role == "assistant":
            if message.content:
                yield update_agent_message_text(message.content)
            calls = message.tool_calls
    yield from _told(calls, results, numbers, cwd)


def _told(
    calls: Sequence[ModelToolCall],
    results: dict[str, Message],
    numbers: Iterator[int],
    cwd: Path,
) -> Iterator[Any]:
    for call in calls:
        result = results.get(call.id)
        yield call_start(
            cwd,
            call,
            real_tools(call),
            f"loaded-{next(numbers)}-{call.id}",
            "failed" if result is None or result.is_error else "completed",
            earlier=_earlier(call, result),
            result=result.content if result is not None else None,
        )


def compaction_thought(history: Sequence[Message]) -> Any | None:
    """The thought telling the client that a loaded session was compacted (``history``, what
    the model goes on from, starts with a compaction's summary); ``None`` when it was not."""
    from acp import update_agent_thought_text

    if not history or not replaces_earlier(history[0]):
        return None
    return update_agent_thought_text(
        "The earlier part of this conversation was compacted into a summary: the model goes "
        f"on from it and the {len(history) - 1} messages after it.\n"
    )
