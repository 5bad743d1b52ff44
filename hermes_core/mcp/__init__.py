"""MCP servers as tools: configuration, connections, filtering, results and supervision.

:class:`McpSupervisor` owns every server of ``mcp_servers`` on the host's event loop and reports
each server's tools (``mcp__<server>__<tool>`` in toolset ``mcp-<server>``) through a callback.
The SDK is imported only when this package is, so ``hermes --version`` does not pay for it.
"""

from __future__ import annotations

from hermes_core.mcp.backoff import Backoff
from hermes_core.mcp.connection import McpConnectError, McpConnection, open_connection
from hermes_core.mcp.expand import expand_server_config, expand_text, read_dotenv
from hermes_core.mcp.filters import FilterOutcome, ToolFilter
from hermes_core.mcp.names import mcp_tool_name, mcp_toolset
from hermes_core.mcp.results import normalize_call_result, protocol_error_result
from hermes_core.mcp.supervisor import McpSupervisor, ServerState, ServerStatus, ToolsChanged
from hermes_core.mcp.tools import ServerTools, annotations_of, server_tools, tool_from_spec

__all__ = [
    "Backoff",
    "FilterOutcome",
    "McpConnectError",
    "McpConnection",
    "McpSupervisor",
    "ServerState",
    "ServerStatus",
    "ServerTools",
    "ToolFilter",
    "ToolsChanged",
    "annotations_of",
    "expand_server_config",
    "expand_text",
    "mcp_tool_name",
    "mcp_toolset",
    "normalize_call_result",
    "open_connection",
    "protocol_error_result",
    "read_dotenv",
    "server_tools",
    "tool_from_spec",
]
