"""The tools of hermes-core this script may call.

Each function takes the tool's parameters as keyword arguments and makes one call back to the
host, which runs it as it runs a call of the model: the same hooks, approvals and activity log.
It returns a :class:`Result` (the tool's text; ``.data`` holds its structured content) or raises
:class:`ToolError` (``.code``: ``DENIED``, ``BLOCKED``, ``TOOL_ERROR``...; ``.message``). Tools
without a function here (deferred ones: MCP servers, connectors) are reached by their full name
with :func:`call`: ``call("mcp__git__git_log", max_count=2)``.
"""

# This file is the head of the generated ``hermes_tools`` module; it runs in the script's
# interpreter (any Python from 3.8), so it uses the standard library only.

from __future__ import annotations

import array
import contextlib
import json
import os
import socket
import threading
from typing import Any

__all__ = ["Result", "ToolError", "call"]

_CHANNEL_FD = -1  # set below by the generated part: the descriptor the host passed to the script


class _ToolDefault:
    def __repr__(self) -> str:
        return "<the tool's default>"


_UNSET: Any = _ToolDefault()


class ToolError(Exception):
    """A tool call that failed: ``code`` (``DENIED``, ``BLOCKED``, ``TOOL_ERROR``,
    ``INVALID_ARGUMENTS``, ``TOO_MANY_CALLS``, ``TOO_MANY_CONNECTIONS``...) and ``message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Result(str):
    """What a tool returned: its text (this string) and its structured content (``data``,
    ``None`` when it gave none)."""

    data: Any = None


_lock = threading.Lock()
_connection: tuple[int, socket.socket, Any] | None = None
_channel: socket.socket | None = None


def _dial() -> socket.socket:
    """A new connection to the host: one end of a fresh socket pair, the other end sent to the
    host over the inherited channel (there is no path or port to connect to)."""
    global _channel
    if _channel is None:
        _channel = socket.socket(fileno=_CHANNEL_FD)
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        rights = array.array("i", [theirs.fileno()])
        _channel.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights.tobytes())])
    except OSError:
        mine.close()
        raise
    finally:
        theirs.close()
    return mine


def _connected() -> tuple[int, socket.socket, Any]:
    global _connection
    if _connection is None or _connection[0] != os.getpid():
        # A forked child gets a connection of its own, never its parent's.
        sock = _dial()
        _connection = (os.getpid(), sock, sock.makefile("rb"))
    return _connection


def _request(name: str, arguments: dict[str, Any]) -> bytes:
    message = {"tool": name, "arguments": arguments}
    try:
        try:
            return json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            # A lone surrogate (a file name that is not UTF-8): escaped, the host reads it back.
            return json.dumps(message).encode("ascii") + b"\n"
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: the arguments must be JSON data ({exc})") from None


def _closed() -> ToolError:
    global _connection
    if _connection is not None:
        _connection[1].close()
        _connection = None  # the next call connects again
    return ToolError("RPC_CLOSED", "the host ended the connection: the run is over")


def _call(name: str, arguments: dict[str, Any]) -> Result:
    given = {key: value for key, value in arguments.items() if value is not _UNSET}
    request = _request(name, given)
    with _lock:
        try:
            _, sock, reader = _connected()
        except OSError:
            raise _closed() from None
        with contextlib.suppress(OSError):  # closed by the host, perhaps after saying why
            sock.sendall(request)
        try:
            line = reader.readline()
        except OSError:
            line = b""
        if not line:
            raise _closed()
        if b'"TOO_MANY_CONNECTIONS"' in line:
            _closed()  # the host refused this connection: the next call asks for a new one
    reply = json.loads(line)
    if reply.get("error"):
        raise ToolError(str(reply.get("code") or "TOOL_ERROR"), str(reply.get("message") or ""))
    result = Result(reply.get("text") or "")
    result.data = reply.get("data")
    return result


def _importing() -> bool:
    """Whether the code that asked :func:`__getattr__` is ``from hermes_tools import ...``:
    Python asks the same way for ``hermes_tools.x``, and only the asking frame's instruction
    tells them apart (CPython; elsewhere the answer is no)."""
    import opcode
    import sys

    try:
        frame = sys._getframe(2)  # this, __getattr__, the asking code
        return frame.f_code.co_code[frame.f_lasti] == opcode.opmap["IMPORT_FROM"]
    except (AttributeError, IndexError, KeyError, ValueError):
        return False


def __getattr__(name: str) -> Any:
    # A deferred tool has no function here: say how to reach it, and what the functions are.
    if name.startswith("__"):
        raise AttributeError(f"module 'hermes_tools' has no attribute {name!r}")
    functions = ", ".join(item for item in __all__ if item not in ("Result", "ToolError", "call"))
    message = (
        f"hermes_tools has no function {name!r}: call a tool without one by its full name, "
        f"hermes_tools.call({name!r}, ...) (the functions: {functions or 'none'})"
    )
    # An AttributeError here would become Python's own "cannot import name", without the hint;
    # hasattr() and getattr(..., default) still get an AttributeError.
    if _importing():
        raise ImportError(message, name="hermes_tools")
    raise AttributeError(message)


def call(name: str, /, **arguments: Any) -> Result:
    """Call the tool ``name`` with keyword arguments: any tool this script may call, deferred
    ones by their full name (``call("mcp__git__git_log", max_count=2)``)."""
    return _call(name, arguments)
