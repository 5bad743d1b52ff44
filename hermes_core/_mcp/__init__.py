"""MCP servers as tools: configuration, connections, filtering, results, supervision, manifests.

:class:`McpSupervisor` owns every server of ``mcp_servers`` on the host's event loop and reports
each server's tools (``mcp__<server>__<tool>`` in toolset ``mcp-<server>``) through a callback;
:class:`ManifestStore` keeps each server's last listing so a host can register its tools before
(or without) starting it. Names are loaded on first use and the SDK only by the modules that
speak to servers, so ``hermes --version`` and a command answered from manifests do not pay
for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import lazy_exports

if TYPE_CHECKING:
    from hermes_core._dotenv import read_dotenv
    from hermes_core._mcp.backoff import Backoff
    from hermes_core._mcp.connection import McpConnectError, McpConnection, open_connection
    from hermes_core._mcp.expand import expand_server_config, expand_text
    from hermes_core._mcp.filters import FilterOutcome, ToolFilter
    from hermes_core._mcp.manifests import ManifestStore, ServerManifest
    from hermes_core._mcp.names import mcp_tool_name, mcp_toolset
    from hermes_core._mcp.results import normalize_call_result, protocol_error_result
    from hermes_core._mcp.startup import McpStartup
    from hermes_core._mcp.supervisor import McpSupervisor, ServerState, ServerStatus, ToolsChanged
    from hermes_core._mcp.tools import ServerTools, annotations_of, server_tools, tool_from_spec

_EXPORTS: dict[str, str] = {
    "Backoff": "hermes_core._mcp.backoff",
    "FilterOutcome": "hermes_core._mcp.filters",
    "ManifestStore": "hermes_core._mcp.manifests",
    "McpConnectError": "hermes_core._mcp.connection",
    "McpConnection": "hermes_core._mcp.connection",
    "McpStartup": "hermes_core._mcp.startup",
    "McpSupervisor": "hermes_core._mcp.supervisor",
    "ServerManifest": "hermes_core._mcp.manifests",
    "ServerState": "hermes_core._mcp.supervisor",
    "ServerStatus": "hermes_core._mcp.supervisor",
    "ServerTools": "hermes_core._mcp.tools",
    "ToolFilter": "hermes_core._mcp.filters",
    "ToolsChanged": "hermes_core._mcp.supervisor",
    "annotations_of": "hermes_core._mcp.tools",
    "expand_server_config": "hermes_core._mcp.expand",
    "expand_text": "hermes_core._mcp.expand",
    "mcp_tool_name": "hermes_core._mcp.names",
    "mcp_toolset": "hermes_core._mcp.names",
    "normalize_call_result": "hermes_core._mcp.results",
    "open_connection": "hermes_core._mcp.connection",
    "protocol_error_result": "hermes_core._mcp.results",
    "read_dotenv": "hermes_core._dotenv",
    "server_tools": "hermes_core._mcp.tools",
    "tool_from_spec": "hermes_core._mcp.tools",
}

__all__ = [
    "Backoff",
    "FilterOutcome",
    "ManifestStore",
    "McpConnectError",
    "McpConnection",
    "McpStartup",
    "McpSupervisor",
    "ServerManifest",
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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())
