"""From hermes tools and results to MCP: what ``tools/list`` and ``tools/call`` answer."""

from __future__ import annotations

import mcp_types

from hermes_core._serve import mcp_call_result, mcp_tool
from hermes_core._tools import Tool, ToolAnnotations, ToolResult
from hermes_core.search._bridge import make_bridge_tools


def test_a_tool_keeps_name_description_schema_and_every_annotation() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tool = Tool(
        name="read_file",
        description="Read a file.",
        parameters=schema,
        annotations=ToolAnnotations(read_only=True, destructive=False, idempotent=True),
    )
    served = mcp_tool(tool)
    assert served.name == "read_file"
    assert served.description == "Read a file."
    assert served.input_schema == schema
    assert served.annotations == mcp_types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    assert served.output_schema is None


def test_a_tool_without_hints_is_served_as_destructive() -> None:
    served = mcp_tool(Tool(name="anything", description="Does something."))
    assert served.annotations is not None
    assert served.annotations.destructive_hint is True
    assert served.annotations.read_only_hint is False


def test_a_schema_that_is_not_an_object_is_served_as_an_open_object() -> None:
    served = mcp_tool(Tool(name="raw", description="Takes anything.", parameters={}))
    assert served.input_schema == {"type": "object", "properties": {}}


def test_structured_content_is_sent_only_when_it_is_an_object() -> None:
    as_object = mcp_call_result(ToolResult.text("1 item", structured={"count": 1}))
    as_list = mcp_call_result(ToolResult.text("[]", structured=[]))
    assert as_object.structured_content == {"count": 1}
    assert as_list.structured_content is None
    assert as_list.content == [mcp_types.TextContent(type="text", text="[]")]


def test_an_error_result_is_an_mcp_error_with_its_message() -> None:
    served = mcp_call_result(ToolResult.error("DENIED", "terminal needs approval"))
    assert served.is_error is True
    assert served.content == [mcp_types.TextContent(type="text", text="terminal needs approval")]


def test_an_error_without_content_still_says_why() -> None:
    result = ToolResult(is_error=True, error_code="TOOL_ERROR", error_message="disk full")
    served = mcp_call_result(result)
    assert served.content == [mcp_types.TextContent(type="text", text="disk full")]


def test_media_blocks_pass_and_unknown_blocks_become_json_text() -> None:
    image = {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}
    odd = {"type": "chart", "series": [1, 2]}
    served = mcp_call_result(ToolResult(content=[image, odd]))
    assert served.content[0] == mcp_types.ImageContent(
        type="image", data="aGVsbG8=", mime_type="image/png"
    )
    assert served.content[1] == mcp_types.TextContent(
        type="text", text='{"type": "chart", "series": [1, 2]}'
    )


def test_tool_call_is_served_as_destructive_and_open_world_because_it_runs_any_tool() -> None:
    async def handler(**arguments: object) -> ToolResult:
        return ToolResult.text("")

    bridge = make_bridge_tools("Search.", handler, handler, handler)
    served = {tool.name: mcp_tool(tool).annotations for tool in bridge}
    assert served["tool_call"] == mcp_types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
    )
    for reading in ("tool_search", "tool_describe"):
        assert served[reading] == mcp_types.ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        )


def test_a_schema_that_does_not_say_its_object_type_keeps_its_properties() -> None:
    """A plugin's ``{"properties": ...}`` (valid JSON Schema) was served as an open object: the
    client's model saw a tool taking nothing."""
    loose = {"properties": {"path": {"type": "string"}}, "required": ["path"]}
    served = mcp_tool(Tool(name="read", description="Read a file.", parameters=loose))
    assert served.input_schema == {"type": "object", **loose}


def test_a_top_level_choice_is_served_as_one_object_said_in_the_description() -> None:
    """Claude Desktop, Claude Code and Cursor send a served tool's schema to their model's API:
    Anthropic's refuses a top-level ``anyOf``, and with it every request of the client."""
    schema = {
        "type": "object",
        "properties": {"space": {"type": "string"}},
        "anyOf": [{"required": ["title"]}, {"required": ["page_url"]}],
    }
    served = mcp_tool(Tool(name="find", description="Find a page.", parameters=schema))
    assert served.input_schema == {"type": "object", "properties": {"space": {"type": "string"}}}
    assert served.description == "Find a page.\n\nGive at least one of: `title`; `page_url`."
