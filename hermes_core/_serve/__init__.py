"""``hermes serve``: the whole host offered to any MCP client as one MCP server.

A client (Claude Desktop, Claude Code, Cursor, the MCP Inspector) attaches one server instead
of twenty: ``tools/list`` answers with the host's assembled tool array (core tools, plus
``tool_search``, ``tool_describe`` and ``tool_call`` with the listing when tools are deferred),
``tools/call`` runs through the host's one call path, and clients are told when the list
changes (an MCP server connected or dropped).
"""

from __future__ import annotations

from hermes_core._serve.convert import mcp_call_result, mcp_tool, mcp_tools
from hermes_core._serve.server import HostServer, SessionScope
from hermes_core._serve.transports import (
    DEFAULT_HTTP_HOST,
    DEFAULT_HTTP_PORT,
    MCP_PATH,
    http_url,
    serve_http,
    serve_stdio,
)

__all__ = [
    "DEFAULT_HTTP_HOST",
    "DEFAULT_HTTP_PORT",
    "MCP_PATH",
    "HostServer",
    "SessionScope",
    "http_url",
    "mcp_call_result",
    "mcp_tool",
    "mcp_tools",
    "serve_http",
    "serve_stdio",
]
