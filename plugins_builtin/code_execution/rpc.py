"""The host's side of a script's tool calls: the connections the script sends over its channel
(:mod:`.channel`), one JSON line per request and per reply, each call run through the dispatcher
by the :class:`~hermes_core.plugin.ToolCaller` of the ``execute_code`` call.

Request: ``{"tool": NAME, "arguments": {...}}``. Reply: ``{"text": ..., "data": ...}``, or
``{"error": true, "code": ..., "message": ...}`` for a refusal or a failed tool. A line holding
text that is not valid Unicode (a file name that is not UTF-8, kept as lone surrogates) is sent
with ``\\u`` escapes, which ``json`` decodes back to the same string. A request longer than
:data:`MAX_REQUEST_BYTES` is read to its end and refused, and one that is not JSON (or nested
too deeply to read) is refused; either way the connection serves the next one.

Each connection holds a descriptor of the host and what it has read of its request, so a run
serves at most :data:`MAX_CONNECTIONS` at once (a connection past it gets one
``TOO_MANY_CONNECTIONS`` reply and is closed), and reads and answers requests longer than
:data:`SHORT_REQUEST_BYTES` one at a time: the host holds the arguments of at most
``MAX_CONNECTIONS`` short requests and one long one.
"""

from __future__ import annotations

import json
import logging
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
from anyio.abc import ByteStream
from anyio.streams.buffered import BufferedByteReceiveStream

from hermes_core.plugin import Tool, ToolCaller, ToolResult

from .channel import connections

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES: Final = 64 * 1024 * 1024
"""The largest request line read (a ``write_file`` of a large file fits)."""
SHORT_REQUEST_BYTES: Final = 1024 * 1024
"""Requests up to this size are read and answered on every connection at once; a longer one
waits until no other long request of the run is being read or answered."""
MAX_CONNECTIONS: Final = 32
"""Connections one run serves at once: each process of the script that calls a tool holds one
(a pool of workers, forked children)."""
_SKIP_CHUNK: Final = 1024 * 1024
_TOOL_AT_START: Final = re.compile(rb'\s*\{\s*"tool"\s*:\s*"([^"\\]{1,200})"')
"""The tool name at the start of a request (the client writes it first)."""


class ScriptTools:
    """Which tools a script may call: the named ones (``code_execution.tools``, each a function
    of ``hermes_tools``) and, by their full name, the deferrable ones the session may call;
    never ``execute_code`` itself."""

    def __init__(self, caller: ToolCaller, names: tuple[str, ...]) -> None:
        self.caller = caller
        self.named: dict[str, Tool] = {}
        for name in names:
            tool = caller.find(name)
            if tool is not None:
                self.named[name] = tool

    def refusal(self, name: str) -> ToolResult | None:
        """Why a script may not call ``name``, or ``None`` when the call goes to the
        dispatcher (which answers for a name it does not know)."""
        if name == self.caller.tool.name:
            return ToolResult.error("NOT_AVAILABLE", f"a script cannot call {name}.")
        if name in self.named:
            return None
        tool = self.caller.find(name)
        if tool is None:
            return self.caller.refusal(name)  # None: the dispatcher names what is wrong
        if self.caller.is_deferrable(tool):
            return None
        allowed = ", ".join(self.named) or "none"
        return ToolResult.error(
            "NOT_AVAILABLE",
            f"a script may not call {name}: it is not in code_execution.tools (a script may "
            f"call {allowed}, and deferred tools by their full name).",
        )


def _reply(result: ToolResult) -> dict[str, Any]:
    if result.is_error:
        return {
            "error": True,
            "code": result.error_code or "TOOL_ERROR",
            "message": result.error_message or result.text_content,
        }
    return {"text": result.text_content, "data": result.structured}


def _failure(code: str, message: str) -> dict[str, Any]:
    return {"error": True, "code": code, "message": message}


@dataclass(frozen=True)
class _Oversized:
    """A request line too long to keep: its length, and the tool its start names."""

    size: int
    tool: str | None


def _oversized(request: _Oversized) -> dict[str, Any]:
    called = f"{request.tool} was not called" if request.tool else "no tool was called"
    return _failure(
        "INVALID_REQUEST",
        f"{called}: the request is {request.size} bytes, more than the {MAX_REQUEST_BYTES} "
        f"bytes ({MAX_REQUEST_BYTES // (1024 * 1024)} MiB) one call may send.",
    )


def encode_line(message: Mapping[str, Any]) -> bytes:
    """``message`` as one line of JSON in UTF-8; text that UTF-8 cannot hold (lone surrogates)
    makes the line ASCII with ``\\u`` escapes, read back to the same text."""
    try:
        data = json.dumps(message, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(message, default=str).encode("ascii")
    return data + b"\n"


async def _read_long_request(reader: BufferedByteReceiveStream) -> bytes | _Oversized:
    """The rest of a request line longer than :data:`SHORT_REQUEST_BYTES`. One longer than
    :data:`MAX_REQUEST_BYTES` is read to its end and dropped, so the line after it is read as
    the next request."""
    try:
        return await reader.receive_until(b"\n", MAX_REQUEST_BYTES)
    except anyio.DelimiterNotFound:
        pass
    size, start = 0, b""
    while True:
        chunk = await reader.receive(_SKIP_CHUNK)  # the buffered start first, then the stream
        start = start or chunk[:512]
        end = chunk.find(b"\n")
        if end >= 0:
            reader.feed_data(chunk[end + 1 :])
            named = _TOOL_AT_START.match(start)
            tool = named.group(1).decode("utf-8", "replace") if named else None
            return _Oversized(size + end, tool)
        size += len(chunk)


class RpcServer:
    """Answers one script's requests; counts the calls it made through the dispatcher and
    refuses those past ``max_calls``."""

    def __init__(self, tools: ScriptTools, max_calls: int) -> None:
        self.tools = tools
        self.max_calls = max_calls
        self.calls_made = 0
        self.open_connections = 0
        self._long_requests = anyio.Lock()

    async def serve(self, host_end: socket.socket) -> None:
        """Serve every connection the script sends over its channel until cancelled, at most
        :data:`MAX_CONNECTIONS` at once."""
        async with anyio.create_task_group() as group:
            async for stream in connections(host_end):
                if self.open_connections >= MAX_CONNECTIONS:
                    group.start_soon(self._refuse, stream)
                    continue
                self.open_connections += 1
                group.start_soon(self._connection, stream)

    async def _refuse(self, stream: ByteStream) -> None:
        async with stream:
            await self._send(
                stream,
                _failure(
                    "TOO_MANY_CONNECTIONS",
                    f"no tool was called: this script already holds {MAX_CONNECTIONS} "
                    "connections to the host, the most one run may (one per process that calls "
                    "tools); call from fewer processes at once.",
                ),
            )

    async def _connection(self, stream: ByteStream) -> None:
        try:
            await self._serve_connection(stream)
        finally:
            self.open_connections -= 1

    async def _serve_connection(self, stream: ByteStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        async with stream:
            while True:
                try:
                    reply = await self._next_reply(reader)
                except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                if not await self._send(stream, reply):
                    return

    async def _next_reply(self, reader: BufferedByteReceiveStream) -> dict[str, Any]:
        """The reply to the connection's next request. One longer than
        :data:`SHORT_REQUEST_BYTES` is read and answered holding the run's lock of long
        requests, so their arguments are in the host one call at a time."""
        try:
            line = await reader.receive_until(b"\n", SHORT_REQUEST_BYTES)
        except anyio.DelimiterNotFound:
            async with self._long_requests:
                request = await _read_long_request(reader)
                if isinstance(request, _Oversized):
                    return _oversized(request)
                return await self.answer(request)
        return await self.answer(line)

    async def _send(self, stream: ByteStream, reply: Mapping[str, Any]) -> bool:
        try:
            await stream.send(encode_line(reply))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True

    async def answer(self, line: bytes) -> dict[str, Any]:
        """The reply to one request line."""
        try:
            request = json.loads(line)
        except ValueError:
            return _failure("INVALID_REQUEST", "a request that is not JSON")
        except RecursionError:
            return _failure("INVALID_REQUEST", "a request nested too deeply to read")
        name = request.get("tool") if isinstance(request, dict) else None
        if not isinstance(name, str):
            return _failure("INVALID_REQUEST", "a request without a tool name")
        refusal = self.tools.refusal(name)
        if refusal is not None:
            return _reply(refusal)
        if self.calls_made >= self.max_calls:
            return _failure(
                "TOO_MANY_CALLS",
                f"{name} was not called: this script already made {self.calls_made} tool calls, "
                "the most one run may make (code_execution.max_tool_calls).",
            )
        self.calls_made += 1
        result = await self.tools.caller.call(name, request.get("arguments", {}))
        return _reply(result)
