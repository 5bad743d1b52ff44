"""From MCP call outcomes to :class:`~hermes_core._tools.ToolResult`.

Both protocol eras (2025-11-25 servers from the TypeScript SDK, 2026-07-28 servers from the
Python SDK) arrive as the SDK's ``CallToolResult``: content blocks (text, image, audio,
resource links, embedded resources) are kept as MCP-style dictionaries, structured content is
kept as is, and ``isError`` becomes an error result. Protocol errors (unknown tool, timeout
-32001, connection closed -32000) become error results too, never exceptions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from hermes_core._result_cut import cut_blocks
from hermes_core._tools import ToolResult

if TYPE_CHECKING:  # the SDK is imported only where a call's outcome is read
    import mcp_types
    from mcp import MCPError

__all__ = [
    "MCP_ERROR",
    "TIMEOUT",
    "TOOL_ERROR",
    "UNAVAILABLE",
    "UNREADABLE_ANSWER",
    "normalize_call_result",
    "protocol_error_result",
    "timeout_result",
    "unavailable_result",
]

TOOL_ERROR: Final = "TOOL_ERROR"
"""The server answered with ``isError``."""
TIMEOUT: Final = "TIMEOUT"
"""No answer within the server's ``timeout`` (MCP -32001)."""
UNAVAILABLE: Final = "UNAVAILABLE"
"""The server is not connected, or the connection closed during the call (MCP -32000)."""
MCP_ERROR: Final = "MCP_ERROR"
"""Any other protocol error (unknown tool, invalid parameters, a malformed answer)."""
UNREADABLE_ANSWER: Final = {"hermes_core": "unreadable answer"}
"""The ``data`` of the error hermes puts in place of a server's answer it cannot read."""


def content_block(block: mcp_types.ContentBlock) -> dict[str, Any]:
    """One content block as the MCP wire dictionary (``{"type": "text", "text": ...}``)."""
    data: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def normalize_call_result(
    result: mcp_types.CallToolResult, *, server: str = "", limit: int | None = None
) -> ToolResult:
    """One ``ToolResult`` from a server's answer.

    A result with structured content but no content blocks gets the JSON text of the
    structured content as its text, so a model that reads only text still sees the answer.
    With a ``limit`` (``mcp_servers.NAME.max_result_chars`` of ``server``), the result is cut
    by :func:`~hermes_core._result_cut.cut_blocks`, the rule connector results share.
    """
    blocks = [content_block(block) for block in result.content]
    structured = result.structured_content
    if not blocks and structured is not None:
        blocks = [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}]
    if limit is not None:
        setting = f"mcp_servers.{server}.max_result_chars" if server else "max_result_chars"
        blocks, structured = cut_blocks(blocks, structured, limit, setting)
    if not result.is_error:
        return ToolResult(content=blocks, structured=structured)
    text = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    return ToolResult(
        content=blocks,
        structured=structured,
        is_error=True,
        error_code=TOOL_ERROR,
        error_message=text or "the tool reported an error without a message",
    )


def protocol_error_result(
    server: str, tool: str, error: MCPError, *, timeout: float, closed: str | None = None
) -> ToolResult:
    """The error result of a call that failed with an MCP error; names the server and tool.
    ``closed`` is why the connection ended, when known (hermes ended the server); else the SDK's
    own reason, when it gives one."""
    import mcp_types

    if error.code == mcp_types.REQUEST_TIMEOUT:
        return timeout_result(server, tool, timeout)
    if error.code == mcp_types.CONNECTION_CLOSED:
        # The SDK says more than "Connection closed" when it gave up on the answer's own stream
        # (an HTTP server's server-sent event past its 1 MiB bound, a stream ended early).
        told = error.message.strip().rstrip(".")
        reason = closed or (told if told.lower() != "connection closed" else "")
        why = f": {reason}" if reason else ""
        return unavailable_result(server, f"the connection closed during the call of {tool!r}{why}")
    if error.data == UNREADABLE_ANSWER:
        return ToolResult.error(
            MCP_ERROR, f"MCP server {server!r} answered the call of {tool!r}: {error.message}"
        )
    return ToolResult.error(
        MCP_ERROR, f"MCP server {server!r} refused the call of {tool!r}: {error.message}"
    )


def timeout_result(server: str, tool: str, timeout: float) -> ToolResult:
    """The error result of a call that the server did not answer within ``timeout``."""
    return ToolResult.error(
        TIMEOUT,
        f"MCP server {server!r} did not answer the call of {tool!r} within its timeout of "
        f"{timeout:g} s (mcp_servers.{server}.timeout).",
    )


def unavailable_result(server: str, reason: str) -> ToolResult:
    """The error result of a call to a server that is not connected."""
    return ToolResult.error(UNAVAILABLE, f"MCP server {server!r} is unavailable: {reason}.")
