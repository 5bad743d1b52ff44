"""``McpHosting``: a host's MCP servers, from its configuration to its registry.

It holds the :class:`~hermes_core._mcp.supervisor.McpSupervisor` (made from the configuration
when the host starts, or on the first server added while it runs), keeps each server's tools in
the registry under the owner ``mcp:<server>``, and answers what the rest of the host asks of the
servers: their status, the ones unavailable, the server a name may be a tool of while it starts,
and the refusal of a filtered tool or of a tool of an unavailable server. Without a supervisor
every answer is "nothing".
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core._project_trust import config_refusal

if TYPE_CHECKING:
    from hermes_core._availability import Availability
    from hermes_core._config import Config, McpServerConfig, ToolsConfig
    from hermes_core._mcp.startup import McpStartup
    from hermes_core._mcp.supervisor import ConnectProgress, McpSupervisor, ServerStatus
    from hermes_core._paths import Environment
    from hermes_core._registry import Registry
    from hermes_core._tools import Tool, ToolResult

logger = logging.getLogger("hermes_core._host")

MCP_OWNER = "mcp:"
"""The registry owner of a server's tools is this prefix and the server's name."""

AddServer = Callable[[str, "McpServerConfig"], Awaitable["ServerStatus"]]


class McpHosting:
    """The MCP servers of one host (:class:`~hermes_core._host.Host`'s ``mcp_*`` arguments).

    ``reconnect`` asks for supervision: servers that fail or go away are connected again with
    backoff, as a long-running host (``hermes serve``, an agent) needs. Without it (the default,
    right for one-shot commands and scripts) a failed server stays unavailable with its reason
    and nothing is retried behind the caller's back. ``backoff`` is the first reconnect delay of
    a dead server, in seconds. ``startup`` says which servers the start waits for, connects in
    the background or leaves alone, from their tool manifests in the cache directory
    (:class:`~hermes_core._mcp.startup.McpStartup`; by default servers with a manifest have their
    tools registered at once and connect in the background, the others are waited for);
    ``progress`` hears how the servers the start waits for are doing.
    """

    def __init__(
        self,
        config: Config,
        env: Environment,
        registry: Registry,
        *,
        config_path: Path | None = None,
        reconnect: bool = False,
        backoff: float = 1.0,
        startup: McpStartup | None = None,
        progress: ConnectProgress | None = None,
    ) -> None:
        self._config = config
        self._env = env
        self._registry = registry
        self._config_path = config_path
        self._reconnect = reconnect
        self._backoff = backoff
        self._startup = startup
        self._progress = progress
        self._supervisor: McpSupervisor | None = None
        self._refusal: str | None = None

    @property
    def supervisor(self) -> McpSupervisor | None:
        """The supervisor of the servers (``None`` until one is configured or added)."""
        return self._supervisor

    def _new_supervisor(self, servers: dict[str, McpServerConfig]) -> McpSupervisor:
        from hermes_core._mcp.startup import McpStartup
        from hermes_core._mcp.supervisor import McpSupervisor

        startup = self._startup or McpStartup()
        manifests = None
        if startup.manifests:
            from hermes_core._mcp.manifests import ManifestStore

            manifests = ManifestStore(self._env.cache_dir / "mcp")
        return McpSupervisor(
            servers,
            self._env,
            on_tools_changed=self._on_tools,
            reconnect=self._reconnect,
            backoff_base=self._backoff,
            manifests=manifests,
            startup=startup,
            on_progress=self._progress,
        )

    async def connect(self) -> None:
        """Start the configured servers (none when the configuration may not start them: a
        project's config without the project gate)."""
        if not self._config.mcp_servers:
            return
        refusal = config_refusal(self._env, self._config_path, "the MCP servers of the config")
        if refusal is not None:
            from hermes_core._mcp.status import SHOWN_IN_STATUS

            self._refusal = refusal
            logger.warning("%s: not started", refusal, extra={SHOWN_IN_STATUS: True})
            return
        self._supervisor = self._new_supervisor(self._config.mcp_servers)
        await self._supervisor.start()

    async def aclose(self) -> None:
        """End every server, also when the start failed or was cancelled half-way (the
        supervisor's task group waits for each server's child process to end, cancelled or not)."""
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None:
            await supervisor.aclose()

    def _on_tools(self, server: str, tools: list[Tool]) -> None:
        owner = MCP_OWNER + server
        with self._registry.batch():
            self._registry.unregister_owner(owner)
            if tools:
                self._registry.register_all(tools, owner=owner)

    async def add_server(self, name: str, config: McpServerConfig) -> ServerStatus:
        """Connect a server while the host runs; the next assembly includes its tools."""
        if self._supervisor is None:
            self._supervisor = self._new_supervisor({})
            await self._supervisor.start()
        return await self._supervisor.add(name, config)

    async def remove_server(self, name: str) -> None:
        """Disconnect a server while the host runs; its tools leave the registry."""
        if self._supervisor is None:
            raise KeyError(name)
        await self._supervisor.remove(name)
        self._registry.unregister_owner(MCP_OWNER + name)

    def running_adder(self) -> AddServer | None:
        """:meth:`add_server` while the supervisor runs, else ``None``: a server started inside a
        tool call would not outlive the call."""
        return self.add_server if self._supervisor is not None else None

    def configs(self) -> dict[str, McpServerConfig]:
        """The servers as they run: the configuration the host started with, and what
        ``manage_connections`` installed, enabled or replaced since (a long-running host)."""
        running = self._supervisor.configs() if self._supervisor is not None else {}
        return {**self._config.mcp_servers, **running}

    def status(self) -> dict[str, ServerStatus]:
        """Each configured MCP server: transport, state, reason, tool and filtered counts; the
        servers of a project's configuration the gate kept from starting are ``gated``."""
        statuses = self._supervisor.status() if self._supervisor is not None else {}
        if self._refusal is None:
            return statuses
        from hermes_core._mcp.status import ServerStatus
        from hermes_core._mcp.transport import transport_of

        gated = {
            name: ServerStatus(name, transport_of(server), "gated", reason=self._refusal)
            for name, server in self._config.mcp_servers.items()
        }
        return {**gated, **statuses}

    def unavailable(self) -> dict[str, tuple[int, str]]:
        """The servers that are not available, as ``{server: (tool count, reason)}``."""
        return self._supervisor.unavailable() if self._supervisor is not None else {}

    def starting_server_of(self, name: str) -> str | None:
        """The starting server ``name`` may be a tool of, if any."""
        supervisor = self._supervisor
        return supervisor.starting_server_of(name) if supervisor is not None else None

    async def wait_for_server(self, server: str) -> None:
        """Until ``server`` has connected or used up its ``connect_timeout``."""
        if self._supervisor is not None:
            await self._supervisor.wait_for_server(server)

    async def wait_for_unknown(self) -> None:
        """Until the servers whose tools are not known yet have answered (or timed out)."""
        if self._supervisor is not None:
            await self._supervisor.wait_for_unknown()

    def availability(
        self, tools_config: ToolsConfig, missing: Callable[[str], str | None] | None = None
    ) -> Availability:
        """Why a name of the registry can or cannot run, knowing these servers: the refusal of
        a filtered tool or of an unavailable server's, and the starting server a name the
        registry lacks may yet be a tool of (waited for, up to its ``connect_timeout``);
        ``missing`` explains the other names it lacks (:class:`Availability`)."""
        from hermes_core._availability import Availability

        return Availability(
            self._registry,
            tools_config,
            explain=self.refusal_for,
            missing=missing,
            starting_source=self.starting_server_of,
            wait_for_source=self.wait_for_server,
        )

    def refusal_for(self, name: str) -> ToolResult | None:
        """The answer for a call of ``name`` when it is a filtered MCP tool or its server is
        unavailable; ``None`` otherwise."""
        return self._supervisor.refusal_for(name) if self._supervisor is not None else None
