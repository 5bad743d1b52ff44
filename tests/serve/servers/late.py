"""A real MCP server (stdio) that answers only once a file exists.

``late.py READY_FILE [--sdk]``: until ``READY_FILE`` exists the process sleeps without reading
its input, so a client's connect attempt runs into its ``connect_timeout``; once the file exists
it serves one tool, ``late_echo``. The tests create the file while ``hermes serve`` runs, so the
host's background reconnect brings the server in and the served tool list changes.

It is written on the standard library (``tests/mcp/servers/stdio_mcp.py``'s loop): the SDK's
import was most of the CPU of each start. ``--sdk`` serves the same from the SDK's low-level
server; ``tests/mcp/test_toolbox_server.py`` checks that both answer alike.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

# The wire rules are one module, beside the other test MCP servers.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "mcp" / "servers"))

from stdio_mcp import StdioServer, text_result

SERVER_INFO = {"name": "late", "version": ""}
TOOL: dict[str, Any] = {
    "name": "late_echo",
    "description": "Echo the text back, from the server that came late.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "annotations": {"readOnlyHint": True, "destructiveHint": False},
}


def echo(name: str, args: dict[str, Any], cancel: threading.Event | None = None) -> dict[str, Any]:
    """The answer to any call: the ``text`` argument back, after ``late: ``."""
    return text_result(f"late: {args.get('text', '')}")


async def serve_sdk() -> None:
    """The same from the SDK's low-level server (``--sdk``: what the stdlib loop is checked
    against)."""
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult.model_validate({"tools": [TOOL]})

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult.model_validate(echo(params.name, params.arguments or {}))

    server: Server[Any] = Server("late", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    ready = Path(sys.argv[1])
    while not ready.exists():
        time.sleep(0.05)
    if "--sdk" in sys.argv[2:]:
        import anyio

        anyio.run(serve_sdk)
    else:
        StdioServer(SERVER_INFO, lambda _: {"tools": [TOOL]}, echo).run()
