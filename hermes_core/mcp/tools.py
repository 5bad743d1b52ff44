"""A server's listing as hermes tools: names, toolset, annotations, filtering.

Each kept MCP tool becomes a :class:`~hermes_core.tools.Tool` named ``mcp__<server>__<tool>``
in toolset ``mcp-<server>`` with source ``mcp``. The handler is supplied by the caller (the
supervisor routes it to the live connection), so a tool survives reconnects unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types

from hermes_core.config import McpServerConfig
from hermes_core.mcp.filters import ToolFilter
from hermes_core.mcp.names import mcp_tool_name, mcp_toolset
from hermes_core.tools import Tool, ToolAnnotations, ToolHandler

__all__ = ["ServerTools", "annotations_of", "server_tools", "tool_from_spec"]

log = logging.getLogger("hermes_core.mcp")

HandlerFactory = Callable[[str, str], ToolHandler]
"""``make_handler(server, original_tool_name)`` -> the handler of that tool."""


@dataclass(frozen=True)
class ServerTools:
    """One listing after filtering: the tools, and the filtered ones (safe name -> original)."""

    tools: list[Tool]
    filtered: dict[str, str] = field(default_factory=dict)
    unmatched_patterns: tuple[str, ...] = ()


def annotations_of(hints: mcp_types.ToolAnnotations | None) -> ToolAnnotations:
    """The MCP hints as :class:`ToolAnnotations`, with the MCP specification's defaults for
    missing hints: destructive and open-world, not read-only, not idempotent."""
    if hints is None:
        return ToolAnnotations(destructive=True, open_world=True)
    return ToolAnnotations(
        read_only=bool(hints.read_only_hint),
        destructive=True if hints.destructive_hint is None else hints.destructive_hint,
        idempotent=bool(hints.idempotent_hint),
        open_world=True if hints.open_world_hint is None else hints.open_world_hint,
    )


def tool_from_spec(
    server: str, config: McpServerConfig, spec: mcp_types.Tool, handler: ToolHandler
) -> Tool:
    """The hermes tool for one listed MCP tool; ``meta["mcp_name"]`` keeps the original name."""
    hints = spec.annotations
    meta: dict[str, Any] = {"mcp_name": spec.name, "mcp_server": server}
    title = spec.title or (hints.title if hints is not None else None)
    if title:
        meta["title"] = title
    if spec.output_schema is not None:
        meta["output_schema"] = spec.output_schema
    return Tool(
        name=mcp_tool_name(server, spec.name),
        description=spec.description or title or "",
        parameters=spec.input_schema,
        handler=handler,
        toolset=mcp_toolset(server),
        source="mcp",
        source_name=server,
        annotations=annotations_of(hints),
        timeout=config.timeout,
        meta=meta,
    )


def server_tools(
    server: str,
    config: McpServerConfig,
    listed: list[mcp_types.Tool],
    make_handler: HandlerFactory,
) -> ServerTools:
    """Filter ``listed`` with the entry's ``include``/``exclude`` and build the kept tools.

    A tool listed twice (or two names that shorten alike) is kept once, with a warning.
    """
    outcome = ToolFilter.from_lists(config.include, config.exclude).apply(t.name for t in listed)
    kept = set(outcome.kept)
    tools: list[Tool] = []
    seen: set[str] = set()
    for spec in listed:
        if spec.name not in kept:
            continue
        tool = tool_from_spec(server, config, spec, make_handler(server, spec.name))
        if tool.name in seen:
            log.warning(
                "MCP server %r lists the tool %r twice; keeping the first", server, spec.name
            )
            continue
        seen.add(tool.name)
        tools.append(tool)
    filtered = {mcp_tool_name(server, name): name for name in outcome.filtered}
    return ServerTools(tools, filtered, outcome.unmatched_patterns)
