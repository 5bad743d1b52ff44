"""The wire rules of the test MCP servers written on the standard library (``toolbox.py``,
``badtools.py``, ``asking.py``, ``../../serve/servers/late.py``): JSON-RPC lines over stdin and
stdout, as the SDK's low-level server answers them.

A client of the 2026-07-28 protocol the SDK's client speaks sends ``server/discover`` and then
its requests, each carrying the version in ``_meta``; the results carry ``resultType``, the
listing ones ``cacheScope`` and ``ttlMs``, and all the server's info in ``_meta``. A client of a
dated version (2025-11-25 and before) starts with ``initialize``; its results carry none of
that. ``notifications/cancelled`` silences the call it names. A tool's handler may read its
request (:func:`current`: the params, the client's capabilities) and, for a client of a dated
version, send it notifications and requests (``elicitation/create``) whose replies come back on
stdin. Each server's tests in ``tests/mcp/test_toolbox_server.py`` check it against its
``--sdk`` twin on the wire.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CURRENT = "2026-07-28"
DATED_DEFAULT = "2025-06-18"
_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

Lister = Callable[[str | None], dict[str, Any]]
"""A ``tools/list`` result for a cursor (``tools``, and ``nextCursor`` while more follow)."""
Caller = Callable[[str, dict[str, Any], threading.Event], dict[str, Any] | None]
"""A ``tools/call`` result for a tool name, its arguments and the event set when the call is
cancelled; ``None`` for a call cancelled before it was answered. It may raise, as a handler of
the SDK's server may."""


class UnknownMethod(Exception):
    """A request the server does not serve: answered "Method not found"."""


@dataclass(frozen=True)
class Request:
    """The request a handler answers on this thread: its ``params`` (``_meta`` included) and
    what the client declared (``capabilities``: at ``initialize`` for a dated client, in each
    request's ``_meta`` for a 2026-07-28 one; ``None`` when it declared nothing)."""

    server: StdioServer
    params: dict[str, Any]
    dated: bool
    capabilities: dict[str, Any] | None

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}


_requests = threading.local()


def current() -> Request:
    """The request the calling thread answers."""
    request: Request = _requests.request
    return request


def text_result(text: str, *, error: bool = False) -> dict[str, Any]:
    """A ``tools/call`` result of one text block."""
    return {"content": [{"type": "text", "text": text}], "isError": error}


class StdioServer:
    """The JSON-RPC loop over stdin and stdout; each request answered on its own thread, so a
    slow call leaves the others answered and a ``notifications/cancelled`` silences it.

    ``discover=False`` is a 2025-era server: ``server/discover`` is "Method not found" (without
    the method named, as a server that never heard of it), so the client falls back to
    ``initialize``."""

    def __init__(
        self, info: dict[str, Any], list_tools: Lister, call_tool: Caller, *, discover: bool = True
    ) -> None:
        self._info = info
        self._list_tools = list_tools
        self._call_tool = call_tool
        self._discover = discover
        self._write_lock = threading.Lock()
        self._cancelled: dict[Any, threading.Event] = {}
        self._dated = False  # a client of a dated version: no 2026-07-28 fields in results
        self._capabilities: dict[str, Any] | None = None  # declared at initialize
        self._ids = itertools.count(1)  # of the requests this server sends, as the SDK's
        self._replies: dict[Any, tuple[threading.Event, list[dict[str, Any]]]] = {}

    def _send(self, message: dict[str, Any]) -> None:
        line = json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")) + "\n"
        with self._write_lock:
            sys.stdout.write(line)
            sys.stdout.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send the client a notification."""
        self._send({"method": method, "params": params})

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send the client a request and wait for its reply (the whole message)."""
        ident = next(self._ids)
        arrived = threading.Event()
        reply: list[dict[str, Any]] = []
        self._replies[ident] = (arrived, reply)
        self._send({"id": ident, "method": method, "params": params})
        arrived.wait()
        return reply[0]

    def _result(self, method: str, params: dict[str, Any], cancel: threading.Event) -> Any:
        if method == "server/discover" and self._discover:
            return {
                "supportedVersions": [CURRENT],
                "capabilities": {"tools": {"listChanged": False}},
            }
        if method == "initialize":
            self._dated = True
            declared = params.get("capabilities")
            self._capabilities = declared if isinstance(declared, dict) else None
            wanted = params.get("protocolVersion")
            return {
                "protocolVersion": wanted if isinstance(wanted, str) else DATED_DEFAULT,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": self._info,
            }
        if method == "tools/list":
            return self._list_tools(params.get("cursor"))
        if method == "tools/call":
            capabilities = self._capabilities
            if not self._dated:
                meta = params.get("_meta")
                declared = meta.get(_CAPABILITIES) if isinstance(meta, dict) else None
                capabilities = declared if isinstance(declared, dict) else None
            _requests.request = Request(self, params, self._dated, capabilities)
            return self._call_tool(str(params["name"]), params.get("arguments") or {}, cancel)
        if method == "ping" and self._dated:
            return {}
        raise UnknownMethod(method)

    def _handle(self, request: dict[str, Any]) -> None:
        ident, method = request["id"], str(request.get("method"))
        cancel = self._cancelled.get(ident) or threading.Event()
        try:
            result = self._result(method, request.get("params") or {}, cancel)
        except UnknownMethod:
            error = {"code": -32601, "message": "Method not found"}
            if method != "server/discover":
                error["data"] = method
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
            meta = {"_meta": {"io.modelcontextprotocol/serverInfo": self._info}}
            if method in ("server/discover", "tools/list", "tools/call"):
                # A result that says its type (input_required) keeps it.
                result = {"resultType": "complete", **result}
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
            elif "method" not in message and message.get("id") in self._replies:
                arrived, reply = self._replies.pop(message["id"])
                reply.append(message)
                arrived.set()
            elif message.get("method") == "notifications/cancelled":
                event = self._cancelled.get(message.get("params", {}).get("requestId"))
                if event is not None:
                    event.set()
