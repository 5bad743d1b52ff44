"""A server's listing as hermes tools: names, toolset, annotations, filtering.

A listing is a sequence of MCP ``Tool`` objects in their wire form (``{"name", "description",
"inputSchema", "annotations": {"readOnlyHint": ...}, ...}``): what a live ``tools/list`` gives
(:attr:`~hermes_core._mcp.connection.McpConnection.listing`) and what a tool manifest keeps
(:mod:`hermes_core._mcp.manifests`), so both become tools by the same rules and neither needs the
MCP SDK here. Each kept MCP tool becomes a :class:`~hermes_core._tools.Tool` named
``mcp__<server>__<tool>`` in toolset ``mcp-<server>`` with source ``mcp``. The handler is
supplied by the caller (the supervisor routes it to the live connection), so a tool survives
reconnects unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_core._config import McpServerConfig
from hermes_core._mcp.filters import ToolFilter
from hermes_core._mcp.manifests import capped_description
from hermes_core._mcp.names import mcp_tool_name, mcp_toolset
from hermes_core._tools import Tool, ToolAnnotations, ToolHandler

__all__ = ["ServerTools", "annotations_of", "handler_timeout", "server_tools", "tool_from_spec"]

log = logging.getLogger("hermes_core._mcp")

HandlerFactory = Callable[[str, str], ToolHandler]
"""``make_handler(server, original_tool_name)`` -> the handler of that tool."""

ToolSpec = Mapping[str, Any]
"""One listed MCP tool in its wire form."""

CALL_GRACE = 5.0
"""Seconds the dispatcher's deadline of an MCP tool allows beyond the server's
``connect_timeout`` plus ``timeout``, so that it never ends a call the supervisor still
bounds itself."""


def handler_timeout(config: McpServerConfig) -> float:
    """The dispatcher's deadline for a call of one of the server's tools (``Tool.timeout``).

    The call may first wait for its server to connect (a known tool, a server still
    starting), which the supervisor bounds by ``connect_timeout``; the call itself it bounds
    by ``timeout``. Each ends with its own message naming the server and that setting, so
    ``timeout`` counts the call alone and the dispatcher's deadline is only a backstop.
    """
    return config.connect_timeout + config.timeout + CALL_GRACE


@dataclass(frozen=True)
class ServerTools:
    """One listing after filtering: the tools, and the filtered ones (safe name -> original)."""

    tools: list[Tool]
    filtered: dict[str, str] = field(default_factory=dict)
    unmatched_patterns: tuple[str, ...] = ()


def _hint(hints: Mapping[str, Any], key: str) -> bool | None:
    value = hints.get(key)
    return value if isinstance(value, bool) else None


def annotations_of(hints: Mapping[str, Any] | None) -> ToolAnnotations:
    """The MCP hints (wire form: ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
    ``openWorldHint``) as :class:`ToolAnnotations`, with the MCP specification's defaults for
    missing hints: destructive and open-world, not read-only, not idempotent."""
    if not isinstance(hints, Mapping):
        return ToolAnnotations(destructive=True, open_world=True)
    destructive = _hint(hints, "destructiveHint")
    open_world = _hint(hints, "openWorldHint")
    return ToolAnnotations(
        read_only=bool(_hint(hints, "readOnlyHint")),
        destructive=True if destructive is None else destructive,
        idempotent=bool(_hint(hints, "idempotentHint")),
        open_world=True if open_world is None else open_world,
    )


def _text(spec: ToolSpec, key: str) -> str | None:
    value = spec.get(key)
    return value if isinstance(value, str) and value else None


def tool_from_spec(
    server: str, config: McpServerConfig, spec: ToolSpec, handler: ToolHandler
) -> Tool:
    """The hermes tool for one listed MCP tool; ``meta["mcp_name"]`` keeps the original name."""
    name = str(spec["name"])
    hints = spec.get("annotations")
    meta: dict[str, Any] = {"mcp_name": name, "mcp_server": server}
    title = _text(spec, "title") or (_text(hints, "title") if isinstance(hints, Mapping) else None)
    if title:
        meta["title"] = title
    output_schema = spec.get("outputSchema")
    if isinstance(output_schema, Mapping):
        meta["output_schema"] = output_schema
    schema = spec.get("inputSchema")
    return Tool(
        name=mcp_tool_name(server, name),
        # A live listing is shortened (and warned about) as it comes; this keeps a manifest
        # written before the cap, or a long title standing in, from passing a long text on.
        description=capped_description(_text(spec, "description") or title or ""),
        parameters=schema if isinstance(schema, Mapping) else {"type": "object"},
        handler=handler,
        toolset=mcp_toolset(server),
        source="mcp",
        source_name=server,
        annotations=annotations_of(hints),
        timeout=handler_timeout(config),
        meta=meta,
    )


def server_tools(
    server: str,
    config: McpServerConfig,
    listed: Sequence[ToolSpec],
    make_handler: HandlerFactory,
) -> ServerTools:
    """Filter ``listed`` with the entry's ``include``/``exclude`` and build the kept tools.

    A tool listed twice (or two names that shorten alike) is kept once, with a warning.
    """
    outcome = ToolFilter.from_lists(config.include, config.exclude).apply(
        str(spec["name"]) for spec in listed
    )
    kept = set(outcome.kept)
    tools: list[Tool] = []
    seen: set[str] = set()
    for spec in listed:
        original = str(spec["name"])
        if original not in kept:
            continue
        tool = tool_from_spec(server, config, spec, make_handler(server, original))
        if tool.name in seen:
            log.warning(
                "MCP server %r lists the tool %r twice; keeping the first", server, original
            )
            continue
        seen.add(tool.name)
        tools.append(tool)
    filtered = {mcp_tool_name(server, name): name for name in outcome.filtered}
    return ServerTools(tools, filtered, outcome.unmatched_patterns)
