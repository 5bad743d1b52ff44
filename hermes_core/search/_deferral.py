"""Which tools are deferrable: kept out of the tool array and reached through the bridge.

The rule lives in one function, :func:`is_deferrable`, checked in the order of the specification
(tool-search.md, "What is deferrable").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase, translate

from hermes_core._config import ToolSearchConfig
from hermes_core._tool_blocks import BlockRun
from hermes_core._tools import BRIDGE_TOOL_NAMES, Tool

__all__ = ["is_deferrable", "matches_any", "not_deferrable_in_block"]

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
    return _deferrable_by_origin(tool.core, tool.source, tool.toolset)


def _deferrable_by_origin(core: bool, source: str, toolset: str) -> bool:
    """Rules 4 to 7 of :func:`is_deferrable`."""
    if core or source == "builtin":
        return False
    if source == "mcp" or toolset.startswith("mcp-"):
        return True
    return source in _PLUGIN_SOURCES


def not_deferrable_in_block(run: BlockRun, config: ToolSearchConfig) -> list[int]:
    """The positions of ``run`` whose tools :func:`is_deferrable` keeps visible, in order,
    decided from the names and each group's toolset, making no tool (a block's tools are not
    core and share the block's source; none has a bridge name)."""
    block = run.block
    by_group = [_deferrable_by_origin(False, block.source, ts) for ts in block.toolsets]
    patterns = [*config.always_visible]
    if all(by_group) and not patterns:
        return []
    names, group_ids = block.names, block.group_ids
    # One regular expression for every glob: the same test as matches_any, name by name.
    glob = re.compile("|".join(f"(?:{translate(pattern)})" for pattern in patterns or ["(?!)"]))
    literal = frozenset(patterns)
    return [
        position
        for position in run.indices()
        if names[position] in literal
        or glob.match(names[position])
        or (not by_group[group_ids[position]] and names[position] not in config.defer)
    ]
