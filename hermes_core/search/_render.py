"""Tools as model providers want them: a neutral shape, OpenAI function tools, Anthropic tools.

Also the token estimate of a tool's schema, which the assembly statistics compare.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from hermes_core._tools import Tool

__all__ = [
    "DescribedTool",
    "ToolFormat",
    "compact_json",
    "estimate_tokens",
    "render_tool",
    "render_tools",
    "tool_tokens",
]

ToolFormat = Literal["neutral", "openai", "anthropic"]


class DescribedTool(Protocol):
    """What rendering reads of a tool: a :class:`~hermes_core._tools.Tool`, or the schema a
    model provider is sent (the agent's ``ToolSchema``)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> Mapping[str, Any]: ...


def compact_json(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``value`` as compact JSON (no spaces, non-ASCII kept), the form tokens are counted on;
    ``default`` as for :func:`json.dumps`."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=default)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text``, estimated as ``ceil(characters / 4)``."""
    return math.ceil(len(text) / 4)


def tool_tokens(tool: DescribedTool) -> int:
    """The estimated tokens of ``tool``'s schema: of its neutral shape as compact JSON. The one
    count of a tool's cost: the listing's tiers, a request's size and its warning use it."""
    return estimate_tokens(compact_json(render_tool(tool)))


def render_tool(tool: DescribedTool, style: ToolFormat = "neutral") -> dict[str, Any]:
    """One tool in ``style``.

    ``neutral``: ``{name, description, parameters}``; ``openai``:
    ``{type: "function", function: {name, description, parameters}}``; ``anthropic``:
    ``{name, description, input_schema}``.
    """
    parameters = dict(tool.parameters)
    if style == "neutral":
        return {"name": tool.name, "description": tool.description, "parameters": parameters}
    if style == "openai":
        function = {"name": tool.name, "description": tool.description, "parameters": parameters}
        return {"type": "function", "function": function}
    if style == "anthropic":
        return {"name": tool.name, "description": tool.description, "input_schema": parameters}
    raise ValueError(f"unknown tool format {style!r}: use 'neutral', 'openai' or 'anthropic'")


def render_tools(tools: Sequence[Tool], style: ToolFormat = "neutral") -> list[dict[str, Any]]:
    """Every tool of ``tools`` in ``style``, in order."""
    return [render_tool(tool, style) for tool in tools]
