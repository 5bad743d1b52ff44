"""A small real MCP server for the tests: seven tools, listed two per page (so clients must
follow cursors).

Over stdio (the default) it is written on the standard library alone: JSON-RPC lines of the
2026-07-28 protocol the SDK's client speaks (``server/discover``, ``tools/list``, ``tools/call``,
``notifications/cancelled``; ``initialize`` for a client of the dated versions before
it). The suite starts it about forty times, and the SDK's import is 0.6 to 0.8 s of CPU a start
against about 0.03 s for this; what each test checks is the host's side of the wire. The SDK's
own servers are still met over stdio (``mcp-server-time``, npm's ``server-everything``,
``asking.py``), and ``tests/mcp/test_toolbox_server.py`` checks that this server and the SDK's
answer alike (``--sdk`` serves the SDK's low-level server over stdio). With ``--http PORT`` it
is the SDK's low-level server over streamable HTTP on 127.0.0.1 (its ``header`` tool answers
there only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from typing import Any

PAGE_SIZE = 2
SERVER_INFO = {"name": "toolbox", "version": "1.0"}
PROTOCOL = "2026-07-28"
_INFO_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}

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


def _text(text: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def answer(name: str, args: dict[str, Any], header: str | None = None) -> dict[str, Any]:
    """The result of calling tool ``name`` (all but ``sleep``, whose wait is the transport's);
    ``header`` is the value of the HTTP header ``args["name"]`` names, where there is one."""
    if name == "echo":
        return _text(f"echo: {args['text']}")
    if name == "add":
        total = int(args["a"]) + int(args["b"])
        return {**_text(str(total)), "structuredContent": {"sum": total}}
    if name == "sleep":
        return _text("slept")
    if name == "fail":
        return _text("this tool always fails", error=True)
    if name == "env":
        return _text(os.environ.get(str(args["name"]), "<unset>"))
    if name == "header":
        return _text(header or "<none>")
    if name == "delete_everything":
        return _text("deleted nothing")
    return _text(f"unknown tool {name}", error=True)


class _UnknownMethod(Exception):
    pass


class StdioServer:
    """The JSON-RPC loop over stdin and stdout; each request answered on its own thread, so a
    ``sleep`` leaves the others answered and a ``notifications/cancelled`` silences it."""

    def __init__(self) -> None:
        self._write_lock = threading.Lock()
        self._cancelled: dict[Any, threading.Event] = {}
        self._dated = False  # a client of a dated version: no 2026-07-28 fields in results

    def _send(self, message: dict[str, Any]) -> None:
        line = json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")) + "\n"
        with self._write_lock:
            sys.stdout.write(line)
            sys.stdout.flush()

    def _result(self, method: str, params: dict[str, Any], cancel: threading.Event) -> Any:
        if method == "server/discover":
            return {
                "supportedVersions": [PROTOCOL],
                "capabilities": {"tools": {"listChanged": False}},
            }
        if method == "initialize":
            self._dated = True
            wanted = params.get("protocolVersion")
            return {
                "protocolVersion": wanted if isinstance(wanted, str) else "2025-06-18",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
            }
        if method == "tools/list":
            return page(params.get("cursor"))
        if method == "tools/call":
            name, args = str(params["name"]), params.get("arguments") or {}
            if name == "sleep" and cancel.wait(float(args.get("seconds", 3600))):
                return None  # cancelled: the client is no longer waiting for an answer
            return answer(name, args)
        raise _UnknownMethod(method)

    def _handle(self, request: dict[str, Any]) -> None:
        ident, method = request["id"], str(request.get("method"))
        cancel = self._cancelled.get(ident) or threading.Event()
        try:
            result = self._result(method, request.get("params") or {}, cancel)
        except _UnknownMethod:
            error = {"code": -32601, "message": "Method not found", "data": method}
            self._send({"id": ident, "error": error})
            return
        except Exception as raised:  # as the SDK's server answers a handler that raised
            if self._dated:
                self._send({"id": ident, "error": {"code": 0, "message": str(raised)}})
            else:
                error = {"code": -32603, "message": "Internal server error"}
                self._send({"id": ident, "error": error})
            return
        finally:
            self._cancelled.pop(ident, None)
        if result is not None and (self._dated or method == "initialize"):
            self._send({"id": ident, "result": result})
        elif result is not None:
            meta = {"_meta": _INFO_META}
            if method in ("server/discover", "tools/list", "tools/call"):
                result = {**result, "resultType": "complete"}
            if method in ("server/discover", "tools/list"):
                result = {**result, "cacheScope": "private", "ttlMs": 0}
            self._send({"id": ident, "result": {**result, **meta}})

    def run(self) -> None:
        """Answer until stdin ends."""
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                continue  # as the SDK's server does: a line that is no JSON is dropped
            if "id" in message and "method" in message:
                self._cancelled[message["id"]] = threading.Event()
                thread = threading.Thread(target=self._handle, args=(message,), daemon=True)
                thread.start()
            elif message.get("method") == "notifications/cancelled":
                event = self._cancelled.get(message.get("params", {}).get("requestId"))
                if event is not None:
                    event.set()


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


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    parser.add_argument("--sdk", action="store_true", help="the SDK's server over stdio")
    options = parser.parse_args()
    if options.http is not None:
        import uvicorn

        app = sdk_server().streamable_http_app()
        uvicorn.run(app, host="127.0.0.1", port=options.http, log_level="warning")
    elif options.sdk:
        import anyio

        anyio.run(serve_sdk_stdio)
    else:
        StdioServer().run()
