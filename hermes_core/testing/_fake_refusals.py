"""The rules of a request the fake model server refuses outright (a 400), as each vendor's API
does: on both wires, tool calls and results that do not pair (:mod:`._fake_tool_pairs`); on
the Anthropic wire, cache breakpoints past the API's most, a message of no content but
the last, a breakpoint on an empty block, and the rules of extended thinking
(:mod:`._fake_thinking`); on the OpenAI wire at OpenRouter, its reasoning rules."""

from __future__ import annotations

from typing import Any, Literal

from hermes_core.testing._fake_thinking import openrouter_refusal, thinking_refusal
from hermes_core.testing._fake_tool_pairs import pairing_refusal

__all__ = ["MAX_CACHE_BREAKPOINTS", "refusal"]

MAX_CACHE_BREAKPOINTS = 4
"""The most ``cache_control`` blocks one Messages API request may carry."""


def _breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if "cache_control" in value else 0
        return own + sum(_breakpoints(item) for item in value.values())
    if isinstance(value, list):
        return sum(_breakpoints(item) for item in value)
    return 0


def refusal(wire: Literal["openai", "anthropic"], body: Any) -> str | None:
    """Why the vendor's API refuses a request of ``body`` outright (a 400), or ``None``: tool
    calls and results that do not pair, a tool's schema not of ``"type": "object"`` (on the
    OpenAI wire, or with ``oneOf``, ``anyOf``, ``allOf``, ``enum`` or ``not`` at its top); on the
    Anthropic wire, more than
    :data:`MAX_CACHE_BREAKPOINTS` cache breakpoints, a message of no content but the last, a
    tool's ``input_schema`` with a combinator at its top level (as Notion's, GitLab's and
    Cloudflare's MCP servers list some), an empty text block or a message whose only text is
    blank, a breakpoint on an empty text or tool result, or its rules of extended thinking
    (:func:`~._fake_thinking.thinking_refusal`)."""
    if wire != "anthropic" or not isinstance(body, dict):
        return pairing_refusal(wire, body) or _openai_schema(body) or openrouter_refusal(body)
    refused = pairing_refusal(wire, body) or _schema_refusal(body) or thinking_refusal(body)
    if refused is not None:
        return refused
    messages = body.get("messages") or []
    refused = _text_refusal("system", body.get("system"))
    for message in messages:
        refused = refused or _text_refusal("messages", message.get("content"))
    if refused is not None:
        return refused
    for number, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if content in ("", []) and number < len(messages) - 1:
            return (
                f"messages.{number}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        for place, block in enumerate(content if isinstance(content, list) else []):
            marked = isinstance(block, dict) and "cache_control" in block
            # a tool's empty result is an empty text block to the cache
            if marked and block.get("text", block.get("content")) in ("", []):
                return (
                    f"messages.{number}.content.{place}.text: cache_control cannot be set for "
                    "empty text blocks"
                )
    found = sum(_breakpoints(body.get(key)) for key in ("tools", "system", "messages"))
    if found > MAX_CACHE_BREAKPOINTS:
        return (
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        )
    return None


def _text_refusal(where: str, content: Any) -> str | None:
    """The API's refusal of ``content``'s text (``where`` is ``system`` or ``messages``): an
    empty text block anywhere, or text blocks that are all blank, none with words, as the
    Messages API answers them (measured by LibreChat's agents, PR 124)."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}] if content else []
    blocks = [b for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    texts = [str(block.get("text", "")) for block in blocks]
    if "" in texts:
        return f"{where}: text content blocks must be non-empty"
    if texts and not any(text.strip() for text in texts):
        return f"{where}: text content blocks must contain non-whitespace text"
    return None


_COMBINATORS = ("oneOf", "allOf", "anyOf")


def _schema_refusal(body: dict[str, Any]) -> str | None:
    tools = body.get("tools")
    for place, tool in enumerate(tools if isinstance(tools, list) else []):
        schema = tool.get("input_schema") if isinstance(tool, dict) else None
        if isinstance(schema, dict) and "type" not in schema:
            return f"tools.{place}.custom.input_schema.type: Field required"
        if isinstance(schema, dict) and schema["type"] != "object":
            return f"tools.{place}.custom.input_schema.type: Input should be 'object'"
        if isinstance(schema, dict) and any(key in schema for key in _COMBINATORS):
            return (
                f"tools.{place}.custom.input_schema: input_schema does not support oneOf, allOf, "
                "or anyOf at the top level"
            )
    return None


def _openai_schema(body: Any) -> str | None:
    tools = body.get("tools") if isinstance(body, dict) else None
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict):
            continue
        schema = function.get("parameters")
        if isinstance(schema, dict) and schema.get("type") != "object":
            return (
                f"Invalid schema for function '{function.get('name')}': schema must be a JSON "
                f"Schema of 'type: \"object\"', got 'type: \"{schema.get('type')}\"'."
            )
        if isinstance(schema, dict) and any(key in schema for key in _OPENAI_TOP_REFUSED):
            return (
                f"Invalid schema for function '{function.get('name')}': schema must have type "
                "'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level."
            )
    return None


_OPENAI_TOP_REFUSED = (*_COMBINATORS, "enum", "not")
"""What OpenAI refuses at a function schema's top level (``if``/``then``/``else`` it takes)."""
