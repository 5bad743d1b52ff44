"""Which tools are deferrable: kept out of the tool array and reached through the bridge.

The rule lives in one function, :func:`is_deferrable`, checked in the order of the specification
(tool-search.md, "What is deferrable").
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from hermes_core.config import ToolSearchConfig
from hermes_core.tools import BRIDGE_TOOL_NAMES, Tool

__all__ = ["is_deferrable", "matches_any"]

_PLUGIN_SOURCES = frozenset({"plugin", "catalog", "connectors"})


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Whether ``name`` equals one of ``patterns`` or matches one as a glob (``mcp__github__*``)."""
    return any(name == pattern or fnmatchcase(name, pattern) for pattern in patterns)


def is_deferrable(tool: Tool, config: ToolSearchConfig) -> bool:
    """Whether ``tool`` may be deferred under ``config``; the first rule that applies decides.

    1. a bridge name is never deferrable;
    2. a name in ``always_visible`` (names or globs) is not deferrable;
    3. a name in the effective ``defer`` list is deferrable, even for a core tool;
    4. a core tool (the built-in working set, or any other built-in not in ``defer``) is not;
    5. an MCP tool (source ``mcp`` or toolset ``mcp-<server>``) is;
    6. any other plugin tool (plugins, catalogs, connectors) is;
    7. a tool whose origin cannot be determined stays visible.
    """
    name = tool.name
    if name in BRIDGE_TOOL_NAMES:
        return False
    if matches_any(name, config.always_visible):
        return False
    if name in config.defer:
        return True
    if tool.core or tool.source == "builtin":
        return False
    if tool.source == "mcp" or tool.toolset.startswith("mcp-"):
        return True
    return tool.source in _PLUGIN_SOURCES
