"""What a host reads of one supervised MCP server: :data:`ServerState` and :class:`ServerStatus`
(what ``hermes mcp list`` shows), and the names the supervisor and its readers share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes_core._tools import Tool

__all__ = ["FILTERED", "SHOWN_IN_STATUS", "ServerState", "ServerStatus", "ToolsChanged"]

SHOWN_IN_STATUS = "hermes_shown_in_status"
"""Set (true) on log records that only repeat what :meth:`McpSupervisor.status` reports, so a
command that prints the statuses (``hermes mcp list``) can drop them."""

ServerState = Literal["connecting", "connected", "known", "unavailable", "disabled", "gated"]
"""``known``: its tools come from its tool manifest and no process of it runs. ``gated``: the
configuration file is the project's and the project gate is closed, so it is not started."""
ToolsChanged = Callable[[str, list[Tool]], None]
"""``on_tools_changed(server, tools)``: the server's complete tool list now; empty when its
tools are gone (it dropped, was removed, or failed to connect)."""

FILTERED = "BLOCKED"
"""The error code of a call to a tool that ``include``/``exclude`` filtered out."""


@dataclass(frozen=True)
class ServerStatus:
    """What ``hermes mcp list`` shows for one server."""

    name: str
    transport: str
    state: ServerState
    reason: str | None = None
    """Why the server is unavailable (or disabled)."""
    tool_count: int = 0
    """Tools registered now, or, when unavailable, at the last successful listing."""
    filtered_count: int = 0
    unmatched_patterns: tuple[str, ...] = ()
    """``include``/``exclude`` patterns that matched no tool of the last listing."""
    protocol_version: str | None = None
    retry_in: float | None = None
    """Seconds until the next reconnect attempt, when one is scheduled."""
    log_path: Path | None = None
    """A stdio server's log file, where its standard error goes."""
    stderr_tail: tuple[str, ...] = ()
    """The last lines of its standard error when its last connection failed or ended."""
    manifest_age: float | None = None
    """Seconds since its tool manifest was listed, when it has one."""
    failed_at: float | None = None
    """When the failure ``reason`` tells of happened (seconds since the epoch)."""
    recorded: bool = False
    """The failure was recorded by an earlier command and the server not started this time
    (a read-only command within ``retry_interval``)."""
