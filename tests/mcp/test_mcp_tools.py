"""A server's listing as hermes tools: names, toolset, annotations, filtering, duplicates."""

from __future__ import annotations

from typing import Any

import mcp_types

from hermes_core._config import McpServerConfig
from hermes_core._mcp.tools import annotations_of, server_tools, tool_from_spec
from hermes_core._tools import ToolAnnotations, ToolHandler, ToolResult

ENTRY = McpServerConfig(
    command="server", timeout=12, include=["get_*", "x.*"], exclude=["get_secret"]
)
SCHEMA = {"type": "object", "properties": {}}


def spec(name: str, **fields: Any) -> dict[str, Any]:
    """A listed tool in its wire form, as the SDK's ``Tool`` gives it."""
    tool = mcp_types.Tool(name=name, input_schema=SCHEMA, **fields)
    return tool.model_dump(mode="json", by_alias=True, exclude_none=True)


def hints(**fields: Any) -> dict[str, Any]:
    """MCP annotations in their wire form."""
    return mcp_types.ToolAnnotations(**fields).model_dump(by_alias=True, exclude_none=True)


def handler_for(server: str, tool: str) -> ToolHandler:
    async def handler(**arguments: Any) -> ToolResult:
        return ToolResult.text(f"{server}/{tool}")

    return handler


def test_missing_annotations_are_destructive_and_open_world() -> None:
    assert annotations_of(None) == ToolAnnotations(
        read_only=False, destructive=True, idempotent=False, open_world=True
    )
    assert annotations_of(hints(read_only_hint=True)).destructive


def test_given_hints_are_kept() -> None:
    given = hints(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    assert annotations_of(given) == ToolAnnotations(True, False, True, False)


def test_tool_carries_server_toolset_deadline_and_original_name() -> None:
    tool = tool_from_spec(
        "srv", ENTRY, spec("get_it", title="Get it", output_schema=SCHEMA), handler_for("srv", "x")
    )
    assert (tool.name, tool.toolset, tool.source, tool.source_name) == (
        "mcp__srv__get_it",
        "mcp-srv",
        "mcp",
        "srv",
    )
    # The dispatcher's deadline leaves the supervisor room to wait for the server's start
    # (connect_timeout) and then for the call (timeout), each bounded with its own message.
    assert tool.timeout > ENTRY.connect_timeout + 12
    assert tool.description == "Get it", "the title stands in for a missing description"
    assert tool.meta == {
        "mcp_name": "get_it",
        "mcp_server": "srv",
        "title": "Get it",
        "output_schema": SCHEMA,
    }


def test_listing_is_filtered_and_filtered_names_are_remembered() -> None:
    listed = [spec("get_a"), spec("get_secret"), spec("put_b"), spec("x.y")]
    built = server_tools("srv", ENTRY, listed, handler_for)
    names = [tool.name for tool in built.tools]
    assert names[0] == "mcp__srv__get_a"
    assert len(names) == 2
    assert names[1].startswith("mcp__srv__x_y_"), "the dotted name is shortened with a hash"
    assert built.tools[1].meta["mcp_name"] == "x.y"
    assert built.filtered == {"mcp__srv__get_secret": "get_secret", "mcp__srv__put_b": "put_b"}


def test_tool_listed_twice_is_kept_once() -> None:
    built = server_tools("srv", McpServerConfig(command="s"), [spec("a"), spec("a")], handler_for)
    assert [tool.name for tool in built.tools] == ["mcp__srv__a"]
