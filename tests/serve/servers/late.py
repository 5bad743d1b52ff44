"""A real MCP server (SDK low-level API, stdio) that answers only once a file exists.

``late.py READY_FILE``: until ``READY_FILE`` exists the process sleeps without reading its input,
so a client's connect attempt runs into its ``connect_timeout``; once the file exists it serves
one tool, ``late_echo``. The tests create the file while ``hermes serve`` runs, so the host's
background reconnect brings the server in and the served tool list changes.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(
    name="late_echo",
    description="Echo the text back, from the server that came late.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False),
)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"late: {text}")])


async def main() -> None:
    server: Server[Any] = Server("late", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    ready = Path(sys.argv[1])
    while not ready.exists():
        time.sleep(0.05)
    anyio.run(main)
