"""The MCP supervisor: every configured server connected, supervised and turned into tools.

One supervising task per enabled server runs on the host's event loop. It connects (all servers
concurrently, each bounded by its ``connect_timeout``), publishes the server's tools through
``on_tools_changed``, and waits. A server that goes away is marked unavailable at once with the
reason, its tools are withdrawn (``on_tools_changed(server, [])``), and, with
``reconnect=True`` (``hermes serve``, hosts that ask for it), it is reconnected after
an exponential backoff: 1 s doubling to 60 s, reset only after 60 s of uptime. A one-shot command
does not reconnect: a failed server stays unavailable with its reason. Leaving the supervisor ends
every stdio child and every process it started (close input, SIGTERM to its process group, then
SIGKILL after a grace period).

With a :class:`~hermes_core._mcp.manifests.ManifestStore` the supervisor keeps each server's tool
manifest: every successful listing is saved, every failed connect recorded, and at start a
server with a manifest has its tools published at once (*known*) before any process starts.
:func:`~hermes_core._mcp.startup.start_plan` then decides per server whether to leave it alone,
connect it in the background or wait for it. A call to a known tool waits for its own server
only (up to its ``connect_timeout``), starting it first when nothing did; a real listing that
differs from the manifest replaces the tools. Known tools of a server that fails to connect stay
published, and their calls say why they cannot run. The MCP SDK is imported only when a server
is connected or called, so a host answered from manifests never loads it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
import anyio.abc

from hermes_core._config import McpServerConfig
from hermes_core._mcp.names import may_name_a_tool_of, mcp_tool_name
from hermes_core._mcp.results import unavailable_result
from hermes_core._mcp.startup import McpStartup
from hermes_core._mcp.status import (
    FILTERED,
    SHOWN_IN_STATUS,
    ServerState,
    ServerStatus,
    ToolsChanged,
)
from hermes_core._mcp.supervised import SupervisedServer, Supervision
from hermes_core._paths import Environment
from hermes_core._tools import Tool, ToolHandler, ToolResult

if TYPE_CHECKING:
    from hermes_core._mcp.connection import McpConnection
    from hermes_core._mcp.manifests import ManifestStore

# FILTERED, SHOWN_IN_STATUS, ServerState, ServerStatus and ToolsChanged live in
# hermes_core._mcp.status (below the per-server state machine); re-exported here.
__all__ = [
    "FILTERED",
    "SHOWN_IN_STATUS",
    "ConnectProgress",
    "McpSupervisor",
    "ServerState",
    "ServerStatus",
    "ToolsChanged",
]

log = logging.getLogger("hermes_core._mcp")

ConnectProgress = Callable[[list[ServerStatus]], None]
"""``on_progress(statuses)``: while the start waits for servers, their statuses, each time one
of them settles (and once before waiting)."""


class McpSupervisor:
    """Owns every MCP server of the configuration on the host's event loop.

    Use it as an async context manager (``async with McpSupervisor(...) as mcp:``), or call
    :meth:`start` and :meth:`aclose` from the same task. ``on_tools_changed`` is called on the
    event loop whenever a server's tool list changes. ``reconnect`` says whether a server that
    failed or went away is connected again (supervision, for a long-running host) or stays
    unavailable (a one-shot command); ``backoff_base``, ``backoff_max`` and ``stable_uptime``
    set the reconnect policy (seconds). A stdio child's standard error goes to its log file,
    ``<log dir>/mcp-<server>.log``. ``manifests`` keeps the tool manifests (none: every server
    is connected and waited for, nothing is cached); ``startup`` says what kind of host starts
    (:class:`~hermes_core._mcp.startup.McpStartup`); ``on_progress`` hears how the servers the
    start waits for are doing.
    """

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        env: Environment,
        *,
        on_tools_changed: ToolsChanged | None = None,
        reconnect: bool = True,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        stable_uptime: float = 60.0,
        manifests: ManifestStore | None = None,
        startup: McpStartup | None = None,
        on_progress: ConnectProgress | None = None,
    ) -> None:
        self._startup = startup or McpStartup()
        self._on_progress = on_progress
        self._on_tools_changed = on_tools_changed
        self._supervision = Supervision(
            env,
            self._notify,
            self._handler,
            manifests,
            reconnect,
            backoff_base,
            backoff_max,
            stable_uptime,
        )
        self._servers: dict[str, SupervisedServer] = {}
        self._held: list[SupervisedServer] = []
        self._task_group: anyio.abc.TaskGroup | None = None
        for name, config in servers.items():
            self._servers[name] = SupervisedServer(name, config, self._supervision)

    # Lifetime ---------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Publish the known tools, then connect the enabled servers concurrently as their
        start plans say.

        Returns when each server the start waits for is connected, has failed, or has used up
        its ``connect_timeout``; a server still trying keeps trying in the background.
        """
        if self._task_group is not None:
            raise RuntimeError("the MCP supervisor is already started")
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        now = time.time()
        waited: list[SupervisedServer] = []
        for server in [s for s in self._servers.values() if s.state != "disabled"]:
            plan = server.prepare(self._startup, now)
            if plan == "skip":
                continue
            if plan == "background" and self._startup.hold_background:
                self._held.append(server)
                continue
            server.launch(self._task_group)
            if plan == "wait":
                waited.append(server)
        await self._wait_attempts(waited, self._on_progress)

    async def aclose(self) -> None:
        """Disconnect every server and end every stdio child; withdraw all tools."""
        task_group, self._task_group = self._task_group, None
        if task_group is None:
            return
        for server in self._servers.values():
            server.note_timeout()
        task_group.cancel_scope.cancel()
        await task_group.__aexit__(None, None, None)
        for server in self._servers.values():
            server.withdraw_tools()

    def release_background(self) -> None:
        """Start the servers held back at start (``McpStartup.hold_background``) that nothing
        has started yet; later calls do nothing."""
        held, self._held = self._held, []
        for server in held:
            if server.run is None and self._task_group is not None and server.name in self._servers:
                server.launch(self._task_group)

    def starting_server_of(self, name: str) -> str | None:
        """The server whose tools are not known yet, still making its first connect (or held
        back at start), that ``name`` may be a tool of; ``None`` when there is none."""
        for server in self._servers.values():
            if server.wait_on_search and may_name_a_tool_of(name, server.name):
                return server.name
        return None

    async def wait_for_server(self, server: str) -> None:
        """Wait for ``server``'s connect attempt, up to its ``connect_timeout`` (starting it
        if nothing did), and for no other server."""
        supervised = self._servers.get(server)
        if supervised is not None:
            await supervised.connection_for_call(self._task_group)

    async def wait_for_unknown(self) -> None:
        """Wait for the servers whose tools are not known yet and whose first connect is still
        under way (a host that did not wait at start, such as ``hermes serve``): a search must
        not miss a server only because it is still starting. Each is waited for up to its
        ``connect_timeout`` but no longer than :data:`~hermes_core._mcp.startup.UNKNOWN_TOOLS_WAIT`
        after its attempt began, so a hung server holds a search for seconds, not for its whole
        ``connect_timeout``. A server whose connect failed recently is not waited for. Those
        of them held back at start are started first; servers whose tools are known are not:
        a search answers from their manifests."""
        unknown = [s for s in self._servers.values() if s.wait_on_search]
        for server in unknown:
            if server.run is None and self._task_group is not None:
                server.launch(self._task_group)
        await self._wait_attempts(unknown, search=True)

    # Changes while running --------------------------------------------------------------------

    async def add(self, name: str, config: McpServerConfig) -> ServerStatus:
        """Add (or replace) the server ``name`` and, when running, connect it.

        Returns its status once it is connected, has failed, or used up its connect_timeout.
        """
        if name in self._servers:
            await self.remove(name)
        server = SupervisedServer(name, config, self._supervision)
        self._servers[name] = server
        if self._task_group is not None and server.state != "disabled":
            server.launch(self._task_group)
            await self._wait_attempts([server])
        return self._status_of(server)

    async def retry(self, name: str) -> ServerStatus:
        """One new connect attempt of the server ``name`` (``KeyError`` if there is none) when
        it is unavailable and nothing is trying it; then its status once that attempt, or the
        one under way, is connected, has failed, or used up its connect_timeout. A connected
        server is left as it is; without ``reconnect`` nothing tries it again after that."""
        server = self._servers[name]
        ended = server.run is None or server.run.done.is_set()
        if server.state == "unavailable" and ended and self._task_group is not None:
            server.launch(self._task_group)
        await self._wait_attempts([server])
        return self._status_of(server)

    async def remove(self, name: str) -> None:
        """Disconnect and forget the server ``name`` (``KeyError`` if there is none)."""
        await self._servers.pop(name).stop()

    # What the host reads ----------------------------------------------------------------------

    def status(self) -> dict[str, ServerStatus]:
        """Every configured server's status, by name."""
        return {name: self._status_of(server) for name, server in self._servers.items()}

    def configs(self) -> dict[str, McpServerConfig]:
        """Every server's configuration as this supervisor runs it (with those added or
        replaced since it started), by name."""
        return {name: server.config for name, server in self._servers.items()}

    def unavailable(self) -> dict[str, tuple[int, str]]:
        """The unavailable servers: name -> (tools at the last listing, reason)."""
        found: dict[str, tuple[int, str]] = {}
        for name, server in self._servers.items():
            status = self._status_of(server)
            if status.state == "unavailable":
                found[name] = (status.tool_count, status.reason or "unknown reason")
        return found

    def connection(self, server: str) -> McpConnection | None:
        """The open connection of ``server``, or ``None`` when it is not connected (what
        ``benchmarks/mcp.py`` calls the server through directly)."""
        supervised = self._servers.get(server)
        return supervised.connection if supervised is not None else None

    def refusal_for(self, name: str) -> ToolResult | None:
        """The error result for a call of ``name`` that no registered tool answers because
        ``include``/``exclude`` filtered it out or its server is unavailable; else ``None``."""
        for server in self._servers.values():
            original = server.filtered.get(name)
            if original is not None:
                return ToolResult.error(
                    FILTERED, server.filter.describe_refusal(server.name, original)
                )
        for server in self._servers.values():
            if not server.may_own(name):
                continue
            status = self._status_of(server)
            if status.state not in ("connected", "known"):
                return unavailable_result(server.name, status.reason or "it is still connecting")
        return None

    async def call_tool(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call ``tool`` (its original MCP name) of ``server``, waiting for that server alone
        while it connects (up to its ``connect_timeout``; a known server that nothing started
        is started now), then for the call up to the server's ``timeout``; every failure is an
        error result naming the server: filtered tool, unavailable server (with the reason,
        ``connect_timeout`` among them), timeout, protocol error."""
        supervised = self._servers.get(server)
        if supervised is None:
            return unavailable_result(server, "it is not configured")
        return await supervised.call(tool, arguments, self._task_group)

    # Shared with every server -----------------------------------------------------------------

    async def _wait_attempts(
        self,
        servers: list[SupervisedServer],
        progress: ConnectProgress | None = None,
        *,
        search: bool = False,
    ) -> None:
        if not servers:
            return

        def report() -> None:
            if progress is not None:
                progress([self._status_of(server) for server in servers])

        async def wait_one(server: SupervisedServer) -> None:
            await server.wait_attempt(search=search)
            report()

        report()
        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(wait_one, server)

    def _status_of(self, server: SupervisedServer) -> ServerStatus:
        return server.status(running=self._task_group is not None)

    def _notify(self, server: str, tools: list[Tool]) -> None:
        if self._on_tools_changed is None:
            return
        try:
            self._on_tools_changed(server, tools)
        except Exception:
            log.exception("on_tools_changed failed for MCP server %r", server)

    def _handler(self, server: str, tool: str) -> ToolHandler:
        async def call(**arguments: Any) -> ToolResult:
            return await self.call_tool(server, tool, arguments)

        call.__name__ = mcp_tool_name(server, tool)
        call.__doc__ = f"Call {tool!r} of MCP server {server!r}."
        return call
