"""A real MCP server (SDK low-level API, stdio) that starts a long-lived child of its own.

``spawner.py MARKER [--silent]``: at start it runs ``python -c <sleep forever> MARKER``, a child
that inherits the server's standard streams and that the server never ends, as a careless server
does with a helper process. Then it serves one tool, ``child_pid``; with ``--silent`` it never
reads its input, so a client's connect attempt runs into its ``connect_timeout``. When its input
closes the server exits and leaves the child behind: only its client can end it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any


def start_child(marker: str) -> subprocess.Popen[bytes]:
    """The long-lived child: a Python process sleeping forever, ``marker`` on its command line."""
    return subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: time.sleep(3600)", marker]
    )


async def main(child: subprocess.Popen[bytes]) -> None:
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server

    tool = types.Tool(
        name="child_pid",
        description="The process id of the child this server started.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False),
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(child.pid))])

    server: Server[Any] = Server("spawner", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    # The child starts before the MCP SDK is imported (a second or more on a loaded machine),
    # so that a silent server's child exists well within a short connect_timeout.
    child = start_child(sys.argv[1])
    print(f"spawner: started child {child.pid}", file=sys.stderr, flush=True)
    if "--silent" in sys.argv[2:]:
        while True:
            time.sleep(3600)
    import anyio

    anyio.run(main, child)
