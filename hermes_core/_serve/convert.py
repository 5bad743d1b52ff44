"""From hermes-core's tools and results to the MCP wire types the served clients read.

Text no UTF-8 holds (a lone surrogate: a file name that is not UTF-8, a plugin's string) is
made U+FFFD here (:mod:`hermes_core._encodable`), before any transport writes it: over
streamable HTTP the SDK's writer raised on it (the client got an empty event stream) or wrote
its ``\\ud800`` escape, which the client's reader refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import mcp_types
from pydantic import TypeAdapter, ValidationError

from hermes_core._encodable import encodable, encodable_value
from hermes_core._schema_roots import sendable
from hermes_core._tools import Tool, ToolResult

__all__ = ["mcp_annotations", "mcp_call_result", "mcp_tool", "mcp_tools"]

_CONTENT_BLOCK: TypeAdapter[mcp_types.ContentBlock] = TypeAdapter(mcp_types.ContentBlock)


def mcp_annotations(tool: Tool) -> mcp_types.ToolAnnotations:
    """The four MCP behaviour hints of ``tool``, always all stated (a client must read a missing
    ``destructiveHint`` as destructive; saying it outright leaves nothing to guess)."""
    hints = tool.annotations
    return mcp_types.ToolAnnotations(
        read_only_hint=hints.read_only,
        destructive_hint=hints.destructive,
        idempotent_hint=hints.idempotent,
        open_world_hint=hints.open_world,
    )


def mcp_tool(tool: Tool) -> mcp_types.Tool:
    """``tool`` as an entry of ``tools/list``: name, description, input schema, annotations;
    the schema one object at its top level (:func:`~hermes_core._schema_roots.sendable`).

    No ``outputSchema`` is declared: a client validates structured content against it, and a
    result passed on from an MCP server or a plugin is not promised to match.
    """
    # The client sends the schema on to its model's API, which wants one object at the top.
    description, schema = sendable(tool.description, tool.parameters)
    if schema.get("type") != "object":
        # MCP requires an object schema at the top; a tool taking anything gets an open one.
        schema = {"type": "object", "properties": {}}
    return mcp_types.Tool(
        name=encodable(tool.name),
        description=encodable(description),
        input_schema=encodable_value(schema),
        annotations=mcp_annotations(tool),
    )


def mcp_tools(tools: Iterable[Tool]) -> list[mcp_types.Tool]:
    """Every tool of an assembly as ``tools/list`` entries, in order."""
    return [mcp_tool(tool) for tool in tools]


def _content_block(block: Any) -> mcp_types.ContentBlock:
    try:
        return _CONTENT_BLOCK.validate_python(block, by_name=False)
    except ValidationError:
        # A plugin's block the protocol does not know still reaches the model, as JSON text.
        text = json.dumps(block, ensure_ascii=False, default=str)
        return mcp_types.TextContent(type="text", text=text)


def mcp_call_result(result: ToolResult) -> mcp_types.CallToolResult:
    """``result`` as the answer of ``tools/call``: content blocks, ``structuredContent`` when the
    structured part is a JSON object (the protocol allows nothing else there), ``isError``."""
    blocks = [_content_block(encodable_value(block)) for block in result.content]
    if not blocks and result.is_error:
        message = result.error_message or "the tool failed without a message"
        blocks = [mcp_types.TextContent(type="text", text=encodable(message))]
    structured = result.structured if isinstance(result.structured, dict) else None
    structured = encodable_value(structured)
    return mcp_types.CallToolResult(
        content=blocks, structured_content=structured, is_error=result.is_error
    )
