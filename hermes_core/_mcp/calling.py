"""One call of a tool over an open connection, every outcome a :class:`ToolResult` naming the
server: the result normalized, a protocol error, no usable answer, or the call's timeout."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from hermes_core._config import McpServerConfig
from hermes_core._encodable import encodable_value
from hermes_core._mcp.results import MCP_ERROR
from hermes_core._tools import ToolResult

if TYPE_CHECKING:
    from hermes_core._mcp.connection import McpConnection

__all__ = ["MAX_ARGUMENTS_DEPTH", "call_connected"]

MAX_ARGUMENTS_DEPTH = 200
"""The deepest arguments sent to a server: the SDK's encoder gives up some 255 levels down, and
when it does in its writer the connection closes (every later call finds the server down)."""


async def call_connected(
    connection: McpConnection,
    server: str,
    config: McpServerConfig,
    tool: str,
    arguments: Mapping[str, Any],
) -> ToolResult:
    """Call ``tool`` (its original MCP name) of ``server`` over ``connection``, waiting at most
    the entry's ``timeout``; the result is cut at its ``max_result_chars``."""
    from mcp import MCPError

    from hermes_core._mcp.failures import describe_failure
    from hermes_core._mcp.manifests import deeper_than
    from hermes_core._mcp.results import (
        normalize_call_result,
        protocol_error_result,
        timeout_result,
    )

    given = dict(arguments)
    if deeper_than(given, MAX_ARGUMENTS_DEPTH):
        return ToolResult.error(
            "INVALID_ARGUMENTS",
            f"the arguments of {tool!r} (MCP server {server!r}) nest more than "
            f"{MAX_ARGUMENTS_DEPTH} levels deep; nothing was sent: send them less deeply nested",
        )
    # A lone surrogate (a model's "\ud800") the SDK's writer cannot encode: it closed the
    # connection. Sent as U+FFFD, as to a model.
    sent = encodable_value(given)
    timeout = config.timeout
    # The SDK bounds each request by the timeout; this bounds the whole call (the SDK may send
    # more than one request for it), so the timeout counts the call and nothing else.
    with anyio.move_on_after(timeout):
        try:
            result = await connection.call_tool(tool, sent, timeout=timeout)
        except MCPError as exc:
            return protocol_error_result(
                server, tool, exc, timeout=timeout, closed=connection.cut_off
            )
        except Exception as exc:
            return ToolResult.error(
                MCP_ERROR,
                f"MCP server {server!r} gave no usable answer to {tool!r}: {describe_failure(exc)}",
            )
        return normalize_call_result(result, server=server, limit=config.max_result_chars)
    return timeout_result(server, tool, timeout)
