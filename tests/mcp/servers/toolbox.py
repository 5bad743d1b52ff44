"""A small real MCP server for the tests: seven tools, listed two per page (so clients must
follow cursors).

Over stdio (the default) it is written on the standard library alone, on ``stdio_mcp.py``'s
loop: JSON-RPC lines of the 2026-07-28 protocol the SDK's client speaks (``server/discover``,
``tools/list``, ``tools/call``, ``notifications/cancelled``; ``initialize`` for a client of the
dated versions before it). It is the suite's "some real stdio MCP server", started about 65
times a run, and the SDK's import is 0.6 to 0.8 s of CPU a start against about 0.03 s
for this; what each test checks is the host's side of the wire. The SDK's own servers are
still met over stdio where they are the point: ``mcp-server-time`` and ``mcp-server-git`` in
the tests of real published servers (``test_mcp_servers.py``, ``test_host_mcp.py``, the catalog
installs, the quickstart), npm's ``server-everything``, and the ``--sdk`` twins of this
server, ``badtools.py``, ``asking.py`` and ``late.py``, which
``tests/mcp/test_toolbox_server.py`` checks them against on the wire. With ``--http PORT`` it is
the SDK's low-level server over streamable HTTP on 127.0.0.1 (its ``header`` tool answers there
only); ``--basic USER:PASS`` and ``--query-token VALUE`` make it answer 401 to a request without
that Basic credential or without ``?token=VALUE`` (a server reached through a URL holding them),
and ``--revoked-when PATH`` to every request once the file ``PATH`` exists (credentials revoked
while a session runs).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

# The wire rules are one module beside this file, found also when this file is run by path
# (``runpy.run_path``), which puts no folder on ``sys.path``.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stdio_mcp import StdioServer, text_result

PAGE_SIZE = 2
SERVER_INFO = {"name": "toolbox", "version": "1.0"}

_TEXT_ARG = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": _TEXT_ARG,
        "annotations": {"readOnlyHint": True, "destructiveHint": False},
    },
    {
        "name": "add",
        "description": "Add two integers; the sum is also structured content.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "sleep",
        "description": "Sleep for some seconds, then answer.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "fail",
        "description": "Always answers with an error result.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "env",
        "description": "The value of one environment variable of the server process.",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    {
        "name": "header",
        "description": "The value of one HTTP request header (streamable HTTP only).",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    {
        "name": "delete_everything",
        "description": "Pretends to delete everything.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"destructiveHint": True},
    },
]


def page(cursor: str | None) -> dict[str, Any]:
    """One page of the listing (``tools``, and ``nextCursor`` while more follow)."""
    start = int(cursor) if cursor else 0
    end = start + PAGE_SIZE
    listed: dict[str, Any] = {"tools": TOOLS[start:end]}
    if end < len(TOOLS):
        listed["nextCursor"] = str(end)
    return listed


def answer(name: str, args: dict[str, Any], header: str | None = None) -> dict[str, Any]:
    """The result of calling tool ``name`` (all but ``sleep``, whose wait is the transport's);
    ``header`` is the value of the HTTP header ``args["name"]`` names, where there is one."""
    if name == "echo":
        return text_result(f"echo: {args['text']}")
    if name == "add":
        total = int(args["a"]) + int(args["b"])
        return {**text_result(str(total)), "structuredContent": {"sum": total}}
    if name == "sleep":
        return text_result("slept")
    if name == "fail":
        return text_result("this tool always fails", error=True)
    if name == "env":
        return text_result(os.environ.get(str(args["name"]), "<unset>"))
    if name == "header":
        return text_result(header or "<none>")
    if name == "delete_everything":
        return text_result("deleted nothing")
    return text_result(f"unknown tool {name}", error=True)


def call_stdio(name: str, args: dict[str, Any], cancel: threading.Event) -> dict[str, Any] | None:
    """A call over stdio: ``sleep`` waits on ``cancel`` (``None``: cancelled, not answered)."""
    if name == "sleep" and cancel.wait(float(args.get("seconds", 3600))):
        return None
    return answer(name, args)


class ToolboxServer(StdioServer):
    """The toolbox over stdio (the servers that add a tool to it subclass this)."""

    def __init__(self) -> None:
        super().__init__(SERVER_INFO, page, call_stdio)


def sdk_server() -> Any:
    """The SDK's low-level server with the same tools and answers."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult.model_validate(page(params.cursor if params else None))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "sleep":
            await anyio.sleep(float(args.get("seconds", 3600)))
        request = getattr(ctx, "request", None)
        header = None
        if params.name == "header" and request is not None:
            header = request.headers.get(str(args["name"]))
        return types.CallToolResult.model_validate(answer(params.name, args, header))

    return Server("toolbox", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_sdk_stdio() -> None:
    """The SDK's server over stdio (``--sdk``: what the stdlib loop is checked against)."""
    from mcp.server.stdio import stdio_server

    server = sdk_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def guarded(
    app: Any, basic: str | None, query_token: str | None, revoked_when: str | None = None
) -> Any:
    """``app`` answering 401 to a request without the Basic credential ``basic``
    (``USER:PASS``) or without ``?token=query_token``, and to every request once the file
    ``revoked_when`` exists."""
    import base64
    from urllib.parse import parse_qs

    wanted = None if basic is None else "Basic " + base64.b64encode(basic.encode()).decode()

    async def guard(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            query = parse_qs(scope["query_string"].decode())
            if (
                (wanted is not None and headers.get(b"authorization", b"").decode() != wanted)
                or (query_token is not None and query.get("token") != [query_token])
                or (revoked_when is not None and os.path.exists(revoked_when))
            ):
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    return guard


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    parser.add_argument("--sdk", action="store_true", help="the SDK's server over stdio")
    parser.add_argument("--basic", default=None, metavar="USER:PASS")
    parser.add_argument("--query-token", default=None, metavar="VALUE")
    parser.add_argument("--revoked-when", default=None, metavar="PATH")
    options = parser.parse_args()
    if options.http is not None:
        import uvicorn

        app = sdk_server().streamable_http_app()
        if options.basic is not None or options.query_token is not None:
            app = guarded(app, options.basic, options.query_token, options.revoked_when)
        uvicorn.run(app, host="127.0.0.1", port=options.http, log_level="warning")
    elif options.sdk:
        import anyio

        anyio.run(serve_sdk_stdio)
    else:
        ToolboxServer().run()
