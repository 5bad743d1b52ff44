"""The pairing of tool calls and their results that both vendors' APIs require, as the fake
model server enforces it: every call of an assistant message answered right after it, and no
result without its call just before (a conversation cut between a call and its result, by a
compaction or a stop, is refused with a 400 by OpenAI and Anthropic alike). On the OpenAI wire
also a call sent back with arguments that are not JSON, as local servers refuse it (llama.cpp,
vLLM: their chat templates read the arguments)."""

from __future__ import annotations

import json
from typing import Any, Literal

__all__ = ["pairing_refusal"]

_OPENAI_UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
_OPENAI_ORPHAN = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)


def pairing_refusal(wire: Literal["openai", "anthropic"], body: Any) -> str | None:
    """The API's refusal of ``body``'s tool calls and results when they do not pair, or
    ``None``."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return None
    listed = [m if isinstance(m, dict) else {} for m in messages]
    if wire == "openai":
        return _openai(listed)
    return _anthropic(listed)


def _openai(messages: list[dict[str, Any]]) -> str | None:
    refused = _unreadable_arguments(messages)
    if refused is not None:
        return refused
    waiting: list[str] = []  # the calls of the last assistant message not answered yet
    open_group = False  # whether a tool message may come here
    for message in messages:
        if message.get("role") == "tool":
            answered = str(message.get("tool_call_id"))
            if not open_group or answered not in waiting:
                return _OPENAI_ORPHAN
            waiting.remove(answered)
            continue
        if waiting:
            return _OPENAI_UNANSWERED.format(ids=", ".join(waiting))
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        waiting = [str(call.get("id")) for call in calls or [] if isinstance(call, dict)]
        open_group = bool(waiting)
    if waiting:
        return _OPENAI_UNANSWERED.format(ids=", ".join(waiting))
    return None


def _unreadable_arguments(messages: list[dict[str, Any]]) -> str | None:
    """A local server's refusal of a call sent back whose arguments are not a JSON object
    (llama.cpp's and vLLM's chat templates read them; OpenAI's own API does not)."""
    for message in messages:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            arguments = function.get("arguments") if isinstance(function, dict) else None
            if not isinstance(arguments, str):
                continue
            try:
                json.loads(arguments, parse_constant=_no_constant)
            except ValueError as error:
                return f"Failed to parse tool call arguments as JSON: {error}"
    return None


def _no_constant(word: str) -> Any:
    """``NaN``, ``Infinity``: Python reads them, JSON has none (llama.cpp refuses them)."""
    raise ValueError(f"{word} is not JSON")


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return [b for b in blocks if isinstance(b, dict) and b.get("type") == kind]


def _anthropic(messages: list[dict[str, Any]]) -> str | None:
    called: list[str] = []  # the tool_use ids of the message before
    for number, message in enumerate(messages):
        results = _blocks(message, "tool_result") if message.get("role") == "user" else []
        answered = [str(block.get("tool_use_id")) for block in results]
        for place, block_id in enumerate(answered):
            if block_id not in called:
                return (
                    f"messages.{number}.content.{place}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block_id}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
        missing = [block_id for block_id in called if block_id not in answered]
        if missing:
            return (
                f"messages.{number - 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
        uses = _blocks(message, "tool_use") if message.get("role") == "assistant" else []
        called = [str(block.get("id")) for block in uses]
    if called:
        return (
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
            "blocks immediately after: "
            f"{', '.join(called)}. Each `tool_use` block must have a corresponding "
            "`tool_result` block in the next message."
        )
    return None
