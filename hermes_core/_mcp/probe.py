"""Connect to one MCP server, list its tools and disconnect: ``hermes mcp test`` and the check
``hermes mcp catalog install`` makes before it writes anything."""

from __future__ import annotations

import time
from dataclasses import dataclass

from hermes_core._config import McpServerConfig
from hermes_core._mcp.connection import open_connection
from hermes_core._mcp.filters import ToolFilter
from hermes_core._paths import Environment

__all__ = ["ProbeReport", "ProbedTool", "probe_server"]


@dataclass(frozen=True)
class ProbedTool:
    """One tool of the listing, with whether ``include``/``exclude`` keep it."""

    name: str
    description: str
    kept: bool


@dataclass(frozen=True)
class ProbeReport:
    """What a successful probe saw."""

    server: str
    protocol_version: str
    tools: tuple[ProbedTool, ...]
    connect_seconds: float
    """From starting the connection to the complete tool listing."""
    unmatched_patterns: tuple[str, ...]


async def probe_server(
    name: str,
    config: McpServerConfig,
    env: Environment,
) -> ProbeReport:
    """Connect to server ``name`` within its ``connect_timeout``, list every tool, disconnect.

    Raises :class:`~hermes_core._mcp.connection.McpConnectError` naming the reason when the
    server cannot be reached (a stdio child is ended either way).
    """
    started = time.perf_counter()
    async with open_connection(name, config, env) as connection:
        elapsed = time.perf_counter() - started
        listing = list(connection.tools)
        version = connection.protocol_version
    rule = ToolFilter.from_lists(config.include, config.exclude)
    outcome = rule.apply(tool.name for tool in listing)
    kept = set(outcome.kept)
    tools = tuple(
        ProbedTool(tool.name, (tool.description or "").strip(), tool.name in kept)
        for tool in listing
    )
    return ProbeReport(name, version, tools, elapsed, outcome.unmatched_patterns)
