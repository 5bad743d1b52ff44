"""A small real MCP server for the tests, written with the SDK's low-level server API.

It lists its tools two per page (so clients must follow cursors) and serves them over stdio, or
over streamable HTTP on 127.0.0.1 with ``--http PORT``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server

PAGE_SIZE = 2

_TEXT_ARG = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS = [
    types.Tool(
        name="echo",
        description="Echo the text back.",
        input_schema=_TEXT_ARG,
        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False),
    ),
    types.Tool(
        name="add",
        description="Add two integers; the sum is also structured content.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    ),
    types.Tool(
        name="sleep",
        description="Sleep for some seconds, then answer.",
        input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
    ),
    types.Tool(
        name="fail",
        description="Always answers with an error result.",
        input_schema={"type": "object", "properties": {}},
    ),
    types.Tool(
        name="env",
        description="The value of one environment variable of the server process.",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}},
    ),
    types.Tool(
        name="header",
        description="The value of one HTTP request header (streamable HTTP only).",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}},
    ),
    types.Tool(
        name="delete_everything",
        description="Pretends to delete everything.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(destructive_hint=True),
    ),
]


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE_SIZE
    next_cursor = str(end) if end < len(TOOLS) else None
    return types.ListToolsResult(tools=TOOLS[start:end], next_cursor=next_cursor)


def _text(
    text: str,
) -> list[
    types.TextContent
    | types.ImageContent
    | types.AudioContent
    | types.ResourceLink
    | types.EmbeddedResource
]:
    return [types.TextContent(type="text", text=text)]


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "echo":
        return types.CallToolResult(content=_text(f"echo: {args['text']}"))
    if params.name == "add":
        total = int(args["a"]) + int(args["b"])
        return types.CallToolResult(content=_text(str(total)), structured_content={"sum": total})
    if params.name == "sleep":
        await anyio.sleep(float(args.get("seconds", 3600)))
        return types.CallToolResult(content=_text("slept"))
    if params.name == "fail":
        return types.CallToolResult(content=_text("this tool always fails"), is_error=True)
    if params.name == "env":
        return types.CallToolResult(content=_text(os.environ.get(str(args["name"]), "<unset>")))
    if params.name == "header":
        request = getattr(ctx, "request", None)
        value = request.headers.get(str(args["name"])) if request is not None else None
        return types.CallToolResult(content=_text(value or "<none>"))
    if params.name == "delete_everything":
        return types.CallToolResult(content=_text("deleted nothing"))
    return types.CallToolResult(content=_text(f"unknown tool {params.name}"), is_error=True)


def build() -> Server[Any]:
    """The server with its two handlers."""
    return Server("toolbox", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(port: int) -> None:
    import uvicorn

    app = build().streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    options = parser.parse_args()
    if options.http is None:
        anyio.run(serve_stdio)
    else:
        serve_http(options.http)
