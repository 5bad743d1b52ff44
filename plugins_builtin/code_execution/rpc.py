"""The host's side of a script's tool calls: a Unix socket in the run's private directory, one
JSON line per request and per reply, each call run through the dispatcher by the
:class:`~hermes_core.ToolCaller` of the ``execute_code`` call.

Request: ``{"tool": NAME, "arguments": {...}}``. Reply: ``{"text": ..., "data": ...}``, or
``{"error": true, "code": ..., "message": ...}`` for a refusal or a failed tool.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final

import anyio
from anyio.abc import ByteStream, Listener
from anyio.streams.buffered import BufferedByteReceiveStream

from hermes_core import Tool, ToolCaller, ToolResult

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES: Final = 64 * 1024 * 1024
"""The largest request line read (a ``write_file`` of a large file fits)."""


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


class RpcServer:
    """Answers one script's requests; counts the calls it made through the dispatcher and
    refuses those past ``max_calls``."""

    def __init__(self, tools: ScriptTools, max_calls: int) -> None:
        self.tools = tools
        self.max_calls = max_calls
        self.calls_made = 0

    async def serve(self, listener: Listener[Any]) -> None:
        """Serve every connection of ``listener`` until cancelled."""
        await listener.serve(self._connection)

    async def _connection(self, stream: ByteStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        async with stream:
            while True:
                try:
                    line = await reader.receive_until(b"\n", MAX_REQUEST_BYTES)
                except anyio.DelimiterNotFound:
                    message = f"a request longer than {MAX_REQUEST_BYTES} bytes"
                    await self._send(stream, _failure("INVALID_REQUEST", message))
                    return
                except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                reply = await self.answer(line)
                if not await self._send(stream, reply):
                    return

    async def _send(self, stream: ByteStream, reply: Mapping[str, Any]) -> bool:
        data = json.dumps(reply, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
        try:
            await stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True

    async def answer(self, line: bytes) -> dict[str, Any]:
        """The reply to one request line."""
        try:
            request = json.loads(line)
        except ValueError:
            return _failure("INVALID_REQUEST", "a request that is not JSON")
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
