"""``session/load``: a conversation's transcript told back to the client as updates.

The loop keeps every message of a session in its transcript
(``$HERMES_HOME/sessions/<id>.jsonl``, redacted). Loading reads those messages back into the
conversation (the model sees the history as it was stored: secrets stay redacted) and sends
the client each of them: the person's messages as ``user_message_chunk``, the model's as
``agent_message_chunk``, each tool call as a finished ``tool_call`` with its kind, title,
locations and result.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hermes_core._acp.toolcalls import (
    arguments_of,
    entries_of,
    locations_of,
    result_content,
    title_of,
    tool_kind,
)
from hermes_core.agent._events import real_tools
from hermes_core.agent._wire import Message


def replayed(messages: Sequence[Message], cwd: Path) -> Iterator[Any]:
    """The updates that tell ``messages`` again, in order."""
    from acp import update_agent_message_text, update_user_message_text
    from acp.schema import ToolCallStart

    results = {message.tool_call_id: message for message in messages if message.role == "tool"}
    numbers = itertools.count(1)
    for message in messages:
        if message.role == "user" and message.content:
            yield update_user_message_text(message.content)
        elif message.role == "assistant":
            if message.content:
                yield update_agent_message_text(message.content)
            for call in message.tool_calls:
                tools = real_tools(call)
                entries = entries_of(call.name, arguments_of(call.arguments))
                result = results.get(call.id)
                yield ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=f"loaded-{next(numbers)}-{call.id}",
                    title=title_of(tools, entries),
                    kind=tool_kind(tools),
                    status="failed" if result is None or result.is_error else "completed",
                    locations=locations_of(cwd, entries) or None,
                    content=result_content(result.content) if result is not None else None,
                    raw_input=arguments_of(call.arguments),
                )
