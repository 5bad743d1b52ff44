"""A real MCP server (stdio) whose ``tools/list`` answer is a JSON file, sent as it is written.

``badtools.py LISTING.json [--legacy] [--sdk]``: the ``tools`` of every ``tools/list`` result are
the list in the file, so the server can list tools that break the MCP schema (no ``name``, an
``inputSchema`` that is not an object, ``required`` that is not a list), as a careless server
does. Any tool called answers with its own name: ``called NAME``. With ``--legacy`` it refuses
``server/discover`` as a 2025-era server does, so the client falls back to the ``initialize``
handshake (protocol 2025-11-25). With ``--changed`` (standard library only) it says its tools
changed after the first listing, and lists one more, ``later``, from then on.

It is written on the standard library (``stdio_mcp.py``'s loop): the SDK's import was most of
the CPU of each start. ``--sdk`` serves the same from the SDK's low-level server, its write
stream rewritten; ``tests/mcp/test_toolbox_server.py`` checks that both answer alike.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any, Self

# The wire rules are one module beside this file, found also when this file is run by path
# (``runpy.run_path``), which puts no folder on ``sys.path``.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stdio_mcp import StdioServer, text_result

SERVER_INFO = {"name": "badtools", "version": ""}


LATER = {"name": "later", "inputSchema": {"type": "object", "properties": {}}}
"""The tool ``--changed`` adds from the second listing on."""


def serve_stdlib(tools: Any, legacy: bool, changed: bool = False) -> None:
    """The server on the standard library. ``changed``: its first listing is followed by
    ``notifications/tools/list_changed``, and every later one holds :data:`LATER` too."""
    listings = 0

    def call_tool(name: str, args: dict[str, Any], cancel: threading.Event) -> dict[str, Any]:
        return text_result(f"called {name}")

    def list_tools(cursor: str | None) -> dict[str, Any]:
        nonlocal listings
        listings += 1
        if not changed:
            return {"tools": tools}
        if listings == 1:
            server.notify("notifications/tools/list_changed", {})
            return {"tools": tools}
        return {"tools": [*tools, LATER]}

    server = StdioServer(SERVER_INFO, list_tools, call_tool, discover=not legacy)
    server.run()


class RawListing:
    """The SDK server's write stream, with the tools of each ``tools/list`` result replaced."""

    def __init__(self, inner: Any, tools: Any) -> None:
        self._inner = inner
        self._tools = tools

    async def send(self, item: Any) -> None:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        message = item.message
        if isinstance(message, types.JSONRPCResponse) and "tools" in message.result:
            result = {**message.result, "tools": self._tools}
            replaced = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
            item = SessionMessage(replaced, metadata=item.metadata)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def refuse_discover(inner: Any, forward: Any, write_stream: Any) -> None:
    """Pass the client's messages on to the SDK server, answering ``server/discover`` with
    "method not found"."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    async with forward:
        async for item in inner:
            message = getattr(item, "message", None)
            if isinstance(message, types.JSONRPCRequest) and message.method == "server/discover":
                error = types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found")
                refusal = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                await write_stream.send(SessionMessage(refusal))
                continue
            await forward.send(item)


async def serve_sdk(tools: Any, legacy: bool) -> None:
    """The same from the SDK's low-level server (``--sdk``: what the stdlib loop is checked
    against)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = f"called {params.name}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server: Server[Any] = Server("badtools", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        raw = RawListing(write_stream, tools)
        if not legacy:
            await server.run(read_stream, raw, server.create_initialization_options())
            return
        forward, received = anyio.create_memory_object_stream[Any](0)
        async with anyio.create_task_group() as group:
            group.start_soon(refuse_discover, read_stream, forward, write_stream)
            await server.run(received, raw, server.create_initialization_options())


if __name__ == "__main__":
    listed = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    if "--sdk" in sys.argv[2:]:
        import anyio

        anyio.run(serve_sdk, listed, "--legacy" in sys.argv[2:])
    else:
        serve_stdlib(listed, "--legacy" in sys.argv[2:], "--changed" in sys.argv[2:])
