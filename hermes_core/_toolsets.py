"""The toolsets a session may be granted, in one place: those of the registered tools, and
those whose tools are not in the registry, or not yet: each configured MCP server's
(``mcp-<server>``: its tools are registered when it connects, which may not have happened, or
may have failed, when a grant is made) and the connectors' (reached through the bridge, never
registered). What a grant that names another toolset gets is no tool of it at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core._connector_names import CONNECTORS_TOOLSET
from hermes_core._mcp.names import mcp_toolset
from hermes_core._tool_blocks import BlockRun, runs_of

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._tools import Tool

__all__ = ["grantable_toolsets", "registered_toolsets"]


def registered_toolsets(tools: Sequence[Tool]) -> frozenset[str]:
    """Every toolset of ``tools`` (a catalog's block answers from its groups, making no tool)."""
    found: set[str] = set()
    for run in runs_of(tools):
        if isinstance(run, BlockRun):
            found.update(run.block.toolsets)
        else:
            found.update(tool.toolset for tool in run)
    return frozenset(found)


def grantable_toolsets(tools: Sequence[Tool], config: Config) -> frozenset[str]:
    """The toolsets a grant may name over the registered ``tools``: theirs, each configured MCP
    server's and ``connectors`` (see the module's docstring)."""
    servers = {mcp_toolset(name) for name in config.mcp_servers}
    return registered_toolsets(tools) | servers | {CONNECTORS_TOOLSET}
