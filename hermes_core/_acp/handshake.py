"""``initialize``, answered before anything heavy is imported.

The ACP SDK's schema is some 6,000 lines of pydantic models: importing it takes one to four
seconds on a loaded 2-core machine, and an editor waits for ``initialize`` before it shows the
agent. So ``hermes acp`` reads the client's first message itself and, when it is
``initialize``, answers it with :func:`initialize_result` (plain JSON: the standard library
only), while the SDK, the configuration and the host load behind it; every later message goes
to the SDK. The SDK's own ``initialize`` handler (:meth:`AcpServer.initialize
<hermes_core._acp.server.AcpServer.initialize>`) answers from the same function, so the
capabilities are said in one place.
"""

from __future__ import annotations

import json
import os
from typing import Any, Final

from hermes_core._encodable import json_line
from hermes_core._jsonrpc_lines import MAX_LINE_BYTES, BoundedLines, LineRefused
from hermes_core._version import __version__

PROTOCOL_VERSION: Final = 1
"""The ACP protocol version hermes speaks (the SDK's ``acp.PROTOCOL_VERSION``)."""


def initialize_result(requested: int) -> dict[str, Any]:
    """The answer to ``initialize`` (as JSON): hermes' capabilities, honestly. Text prompts
    and embedded context (no images or audio); MCP servers over stdio and HTTP (no SSE);
    ``session/load`` (from the transcripts); no authentication (the model's key is hermes' own
    configuration)."""
    return {
        "protocolVersion": min(requested, PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
        },
        "authMethods": [],
        "agentInfo": {"name": "hermes", "title": "Hermes", "version": __version__},
    }


def read_first_line(fd: int) -> tuple[bytes | LineRefused, bytes]:
    """The first line from ``fd`` (with its newline; what came before end of input when there
    is none), or why it is refused when longer than
    :data:`~hermes_core._jsonrpc_lines.MAX_LINE_BYTES` (it is read to its newline and let go),
    and the bytes read past it."""
    lines = BoundedLines(MAX_LINE_BYTES)
    while True:
        chunk = os.read(fd, 65536)
        newline = chunk.find(b"\n")
        if chunk and newline < 0:
            lines.feed(chunk)
            continue
        found = lines.feed(chunk[: newline + 1]) if chunk else lines.end()
        if not found:
            return b"", b""  # the client left without a word
        end = b"\n" if chunk else b""
        line = found[0]
        return (line if isinstance(line, LineRefused) else line + end), chunk[newline + 1 :]


def write_message(fd: int, message: dict[str, Any]) -> None:
    """Write ``message`` on ``fd`` as one line."""
    data = (json_line(message) + "\n").encode("utf-8")
    while data:
        data = data[os.write(fd, data) :]


def answer_initialize(line: bytes, fd: int) -> dict[str, Any] | None:
    """Answer ``line`` on ``fd`` when it is a well-formed ``initialize`` request; its params
    then (the client's capabilities), else ``None`` (the SDK will read the line)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # the SDK's connection answers it (a parse error)
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    params = message.get("params")
    if "id" not in message or not isinstance(params, dict):
        return None
    requested = params.get("protocolVersion")
    if not isinstance(requested, int) or isinstance(requested, bool) or requested < 0:
        return None
    write_message(
        fd, {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(requested)}
    )
    return params
