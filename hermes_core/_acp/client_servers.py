"""The MCP servers an ACP client passes in ``session/new``, connected for that session.

Each becomes an MCP server of the host (``Host.add_mcp_server``), so its tools are ordinary
MCP tools: deferred behind the bridge (``tool_search`` finds them, ``tool_call`` runs them),
through the one call path with hooks, approvals and the activity log. They are scoped to the
session by its grant: a session's ``granted_toolsets`` names its own servers' toolsets
(``mcp-<server>``) and not another session's, so one editor window's servers are invisible to
the next. A stdio server runs in the session's directory. Two sessions passing the same server
(same name, command and directory, or URL) share one connection; a different server under a
name already taken is renamed ``<name>-2``, ``-3``... Servers stay connected until ``hermes
acp`` ends (ACP's stable protocol has no session close).

A server that fails to connect is told to the editor's user (:func:`failures_told`: the
session's first update, its name as the editor gave it, the reason and what to check); stderr
has the MCP supervisor's one line about it. A later session passing the same server tries it
once more (the user may have started it meanwhile): one attempt per session that asks, in the
one place the supervisor connects a server, never a loop behind the editor's back.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core._acp.toolcalls import code_span
from hermes_core._config import McpServerConfig
from hermes_core._mcp.names import mcp_toolset
from hermes_core._redaction import shown_url

if TYPE_CHECKING:
    from hermes_core._acp.runtime import AcpRuntime
    from hermes_core._host import Host

_log = logging.getLogger(__name__)
_ILLEGAL = re.compile(r"[^A-Za-z0-9-]+")


def server_config(server: Any, cwd: Path) -> McpServerConfig | None:
    """The hermes entry for one ACP server description (stdio or http; a stdio server runs in
    the session's directory ``cwd``); ``None`` for a transport hermes does not speak (SSE),
    which ``initialize`` does not advertise."""
    if getattr(server, "type", None) == "http":
        headers = {header.name: header.value for header in server.headers}
        return McpServerConfig(url=server.url, headers=headers)
    if getattr(server, "command", None) is not None:
        env = {variable.name: variable.value for variable in server.env}
        return McpServerConfig(
            command=server.command, args=list(server.args), env=env, cwd=str(cwd)
        )
    return None


def _base_name(name: str) -> str:
    cleaned = _ILLEGAL.sub("-", name).strip("-").lower()
    return cleaned[:40] or "client"


def _free_name(host: Host, wanted: str, config: McpServerConfig) -> tuple[str, bool]:
    """The server name to use and whether it already runs with this very configuration."""
    taken = dict(host.config.mcp_servers)
    if host.mcp is not None:
        taken.update(host.mcp.configs())
    number = 1
    name = wanted
    while name in taken:
        if taken[name] == config:
            return name, True
        number += 1
        name = f"{wanted}-{number}"
    return name, False


@dataclass(frozen=True)
class ClientServers:
    """What connecting a session's client servers gave: the toolsets to grant it, and a
    sentence for each server that failed to connect."""

    toolsets: frozenset[str]
    failures: tuple[str, ...]


def _failure(server: Any, config: McpServerConfig, reason: str) -> str:
    """What the editor's user is told of ``server`` that failed: its name as the editor gave
    it, why, and what to check (its command, or its URL with its secrets hidden: the thread
    is kept and shared as the editor's)."""
    if config.url is not None:
        check = f"check that an MCP server answers at {code_span(shown_url(config.url))}"
    else:
        check = f"check its command, {code_span(str(config.command))}, and its arguments"
    return (
        f"The editor's MCP server {code_span(server.name)} failed to connect "
        f"({code_span(reason)}): this session has none of its tools; {check}."
    )


async def connect_client_servers(
    runtime: AcpRuntime, servers: Sequence[Any], cwd: Path
) -> ClientServers:
    """Connect ``servers`` (ACP descriptions) as MCP servers of the host: the toolsets to grant
    the session, and what to tell of each that failed (one another session shares included).
    The MCP supervisor logs a failure once on stderr."""
    toolsets: set[str] = set()
    failures: list[str] = []
    for server in servers:
        config = server_config(server, cwd)
        if config is None:
            _log.warning("MCP server %r: its transport is not supported; ignored", server.name)
            continue
        name, running = _free_name(runtime.host, _base_name(server.name), config)
        if running:
            status = runtime.host.mcp_status().get(name)
            if status is not None and status.state == "unavailable":
                status = await runtime.retry_mcp_server(name)
        else:
            status = await runtime.add_mcp_server(name, config)
        if status is not None and status.state != "connected":
            failures.append(_failure(server, config, status.reason or status.state))
        toolsets.add(mcp_toolset(name))
    return ClientServers(frozenset(toolsets), tuple(failures))


def failures_told(failures: Sequence[str]) -> Any | None:
    """The ``agent_message_chunk`` telling the editor's user of the client servers that
    failed, each its own paragraph (also after a loaded session's last message, which a
    chunk would otherwise continue); ``None`` when none failed."""
    from acp import update_agent_message_text

    if not failures:
        return None
    return update_agent_message_text("".join(f"\n\n{failure}" for failure in failures))
