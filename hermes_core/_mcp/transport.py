"""Which transport a server entry uses, without the MCP SDK (statuses need it at every start)."""

from __future__ import annotations

from hermes_core._config import McpServerConfig

__all__ = ["transport_of"]


def transport_of(config: McpServerConfig) -> str:
    """``"stdio"`` for a command entry, ``"http"`` for a URL entry."""
    return "http" if config.url is not None else "stdio"
