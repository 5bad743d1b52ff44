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
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import anyio
import anyio.abc
from mcp import MCPError

from hermes_core.config import McpServerConfig
from hermes_core.mcp.backoff import Backoff
from hermes_core.mcp.connection import (
    McpConnectError,
    McpConnection,
    describe_failure,
    open_connection,
    transport_of,
)
from hermes_core.mcp.filters import ToolFilter
from hermes_core.mcp.names import mcp_tool_name
from hermes_core.mcp.results import (
    MCP_ERROR,
    normalize_call_result,
    protocol_error_result,
    unavailable_result,
)
from hermes_core.mcp.serverlog import server_log_path
from hermes_core.mcp.tools import server_tools
from hermes_core.paths import Environment
from hermes_core.tools import Tool, ToolHandler, ToolResult

__all__ = [
    "FILTERED",
    "SHOWN_IN_STATUS",
    "McpSupervisor",
    "ServerState",
    "ServerStatus",
    "ToolsChanged",
]

log = logging.getLogger("hermes_core.mcp")

SHOWN_IN_STATUS = "hermes_shown_in_status"
"""Set (true) on log records that only repeat what :meth:`McpSupervisor.status` reports, so a
command that prints the statuses (``hermes mcp list``) can drop them."""
_IN_STATUS = {SHOWN_IN_STATUS: True}

ServerState = Literal["connecting", "connected", "unavailable", "disabled"]
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


@dataclass(eq=False)
class _Server:
    """The mutable record of one configured server."""

    name: str
    config: McpServerConfig
    filter: ToolFilter
    state: ServerState = "connecting"
    reason: str | None = None
    connection: McpConnection | None = None
    tools: list[Tool] = field(default_factory=list)
    last_tool_count: int = 0
    filtered: dict[str, str] = field(default_factory=dict)
    """Safe name -> original name of every filtered tool of the last listing."""
    published: frozenset[str] = frozenset()
    """The tool names of the last listing, kept while the server is down."""
    unmatched: tuple[str, ...] = ()
    warned_patterns: set[str] = field(default_factory=set)
    connect_deadline: float = math.inf
    retry_at: float | None = None
    stderr_tail: tuple[str, ...] = ()
    run: _Run | None = None
    """The supervising task's handles, made on the event loop when it starts."""


@dataclass(eq=False)
class _Run:
    """Handles of one supervising task: its cancel scope, first-attempt and end events."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    settled: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)


class McpSupervisor:
    """Owns every MCP server of the configuration on the host's event loop.

    Use it as an async context manager (``async with McpSupervisor(...) as mcp:``), or call
    :meth:`start` and :meth:`aclose` from the same task. ``on_tools_changed`` is called on the
    event loop whenever a server's tool list changes. ``reconnect`` says whether a server that
    failed or went away is connected again (supervision, for a long-running host) or stays
    unavailable (a one-shot command); ``backoff_base``, ``backoff_max`` and ``stable_uptime``
    set the reconnect policy (seconds). A stdio child's standard error goes to its log file,
    ``<log dir>/mcp-<server>.log``.
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
    ) -> None:
        self._env = env
        self._on_tools_changed = on_tools_changed
        self._reconnect = reconnect
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._stable_uptime = stable_uptime
        self._servers: dict[str, _Server] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        for name, config in servers.items():
            self._servers[name] = self._record(name, config)

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
        """Connect every enabled server concurrently.

        Returns when each server is connected, has failed, or has used up its
        ``connect_timeout``; a server still trying keeps trying in the background.
        """
        if self._task_group is not None:
            raise RuntimeError("the MCP supervisor is already started")
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        records = [r for r in self._servers.values() if r.state != "disabled"]
        for record in records:
            self._launch(record)
        await self._wait_settled(records)

    async def aclose(self) -> None:
        """Disconnect every server and end every stdio child; withdraw all tools."""
        task_group, self._task_group = self._task_group, None
        if task_group is None:
            return
        task_group.cancel_scope.cancel()
        await task_group.__aexit__(None, None, None)

    # Changes while running --------------------------------------------------------------------

    async def add(self, name: str, config: McpServerConfig) -> ServerStatus:
        """Add (or replace) the server ``name`` and, when running, connect it.

        Returns its status once it is connected, has failed, or used up its connect_timeout.
        """
        if name in self._servers:
            await self.remove(name)
        record = self._record(name, config)
        self._servers[name] = record
        if self._task_group is not None and record.state != "disabled":
            self._launch(record)
            await self._wait_settled([record])
        return self._status_of(record)

    async def remove(self, name: str) -> None:
        """Disconnect and forget the server ``name`` (``KeyError`` if there is none)."""
        record = self._servers.pop(name)
        if record.run is not None:
            record.run.scope.cancel()
            await record.run.done.wait()

    # What the host reads ----------------------------------------------------------------------

    def status(self) -> dict[str, ServerStatus]:
        """Every configured server's status, by name."""
        return {name: self._status_of(record) for name, record in self._servers.items()}

    def unavailable(self) -> dict[str, tuple[int, str]]:
        """The unavailable servers: name -> (tools at the last listing, reason)."""
        found: dict[str, tuple[int, str]] = {}
        for name, record in self._servers.items():
            status = self._status_of(record)
            if status.state == "unavailable":
                found[name] = (status.tool_count, status.reason or "unknown reason")
        return found

    def connection(self, server: str) -> McpConnection | None:
        """The open connection of ``server``, or ``None`` when it is not connected."""
        record = self._servers.get(server)
        return record.connection if record is not None else None

    def tools(self) -> list[Tool]:
        """The tools of every connected server."""
        return [tool for record in self._servers.values() for tool in record.tools]

    def refusal_for(self, name: str) -> ToolResult | None:
        """The error result for a call of ``name`` that no registered tool answers because
        ``include``/``exclude`` filtered it out or its server is unavailable; else ``None``."""
        for record in self._servers.values():
            original = record.filtered.get(name)
            if original is not None:
                return ToolResult.error(
                    FILTERED, record.filter.describe_refusal(record.name, original)
                )
        for record in self._servers.values():
            # Before a first listing the names are unknown; the prefix is unambiguous because a
            # server name cannot contain "__".
            known = name in record.published or (
                not record.published and name.startswith(f"mcp__{record.name}__")
            )
            if known:
                status = self._status_of(record)
                if status.state != "connected":
                    return unavailable_result(
                        record.name, status.reason or "it is still connecting"
                    )
        return None

    async def call_tool(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call ``tool`` (its original MCP name) of ``server``; every failure is an error result
        naming the server: filtered tool, unavailable server, timeout, protocol error."""
        record = self._servers.get(server)
        if record is None:
            return unavailable_result(server, "it is not configured")
        if not record.filter.allows(tool):
            return ToolResult.error(FILTERED, record.filter.describe_refusal(server, tool))
        connection = record.connection
        if connection is None or connection.closed:
            status = self._status_of(record)
            return unavailable_result(server, status.reason or "it is still connecting")
        try:
            result = await connection.call_tool(
                tool, dict(arguments), timeout=record.config.timeout
            )
        except MCPError as exc:
            return protocol_error_result(server, tool, exc, timeout=record.config.timeout)
        except Exception as exc:
            return ToolResult.error(
                MCP_ERROR,
                f"MCP server {server!r} gave no usable answer to {tool!r}: {describe_failure(exc)}",
            )
        return normalize_call_result(result)

    # Supervision ------------------------------------------------------------------------------

    def _record(self, name: str, config: McpServerConfig) -> _Server:
        record = _Server(name, config, ToolFilter.from_lists(config.include, config.exclude))
        if not config.enabled:
            record.state = "disabled"
            record.reason = f"disabled (mcp_servers.{name}.enabled is false)"
        return record

    def _launch(self, record: _Server) -> None:
        assert self._task_group is not None
        record.run = _Run()
        self._task_group.start_soon(self._supervise, record, record.run, name=f"mcp:{record.name}")

    async def _wait_settled(self, records: list[_Server]) -> None:
        async def wait_one(record: _Server) -> None:
            assert record.run is not None
            with anyio.move_on_after(record.config.connect_timeout):
                await record.run.settled.wait()

        async with anyio.create_task_group() as group:
            for record in records:
                group.start_soon(wait_one, record)

    async def _supervise(self, record: _Server, run: _Run) -> None:
        backoff = Backoff(self._backoff_base, self._backoff_max, self._stable_uptime)
        try:
            with run.scope:
                while True:
                    up_since: float | None = None
                    record.state = "connecting"
                    record.retry_at = None
                    record.connect_deadline = anyio.current_time() + record.config.connect_timeout
                    opened: McpConnection | None = None
                    try:
                        async with open_connection(
                            record.name, record.config, self._env
                        ) as connection:
                            opened = connection
                            up_since = anyio.current_time()
                            record.connection = connection
                            self._publish(record, connection)
                            run.settled.set()
                            reason = await self._serve(record, connection)
                    except McpConnectError as exc:
                        reason = exc.reason
                        record.stderr_tail = exc.stderr_tail
                    except Exception as exc:
                        reason = f"the connection failed: {describe_failure(exc)}"
                    if opened is not None and opened.log is not None:
                        record.stderr_tail = opened.log.tail
                    self._withdraw(record, reason)
                    run.settled.set()
                    where = self._log_hint(record)
                    if not self._reconnect:
                        log.warning(
                            "MCP server %r is unavailable (%s)%s",
                            record.name,
                            reason,
                            where,
                            extra=_IN_STATUS,
                        )
                        return
                    now = anyio.current_time()
                    delay = backoff.next_delay(None if up_since is None else now - up_since)
                    log.warning(
                        "MCP server %r is unavailable (%s); reconnecting in %g s%s",
                        record.name,
                        reason,
                        delay,
                        where,
                    )
                    record.retry_at = now + delay
                    await anyio.sleep(delay)
        finally:
            record.connection = None
            if record.tools:
                record.tools = []
                self._notify(record.name, [])
            run.done.set()

    async def _serve(self, record: _Server, connection: McpConnection) -> str:
        """Wait while the connection lives, re-listing on ``tools/list_changed``; return why it
        ended."""
        while True:
            async with anyio.create_task_group() as group:

                async def closed() -> None:
                    await connection.wait_closed()
                    group.cancel_scope.cancel()

                async def changed() -> None:
                    await connection.tools_changed.wait()
                    group.cancel_scope.cancel()

                group.start_soon(closed)
                group.start_soon(changed)
            if connection.closed:
                return connection.close_reason or "the connection closed"
            connection.tools_changed = anyio.Event()
            try:
                with anyio.fail_after(record.config.timeout):
                    await connection.refresh_tools()
            except Exception as exc:
                return f"listing the changed tools failed: {describe_failure(exc)}"
            self._publish(record, connection)

    def _publish(self, record: _Server, connection: McpConnection) -> None:
        built = server_tools(record.name, record.config, connection.tools, self._handler)
        tools, filtered, unmatched = built.tools, built.filtered, built.unmatched_patterns
        record.state = "connected"
        record.reason = None
        record.tools = tools
        record.last_tool_count = len(tools)
        record.published = frozenset(tool.name for tool in tools)
        record.filtered = filtered
        record.unmatched = unmatched
        for pattern in unmatched:
            if pattern not in record.warned_patterns:
                record.warned_patterns.add(pattern)
                log.warning(
                    "MCP server %r: the include/exclude pattern %r matches none of its tools "
                    "(mcp_servers.%s)",
                    record.name,
                    pattern,
                    record.name,
                    extra=_IN_STATUS,
                )
        self._notify(record.name, list(tools))

    def _log_hint(self, record: _Server) -> str:
        path = self._log_path(record)
        if path is None or not record.stderr_tail:
            return ""
        return f"; its standard error is in {path}"

    def _log_path(self, record: _Server) -> Path | None:
        return server_log_path(self._env, record.name) if record.config.url is None else None

    def _withdraw(self, record: _Server, reason: str) -> None:
        record.state = "unavailable"
        record.reason = reason
        record.connection = None
        if record.tools:
            record.tools = []
            self._notify(record.name, [])

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

    def _status_of(self, record: _Server) -> ServerStatus:
        connection = record.connection
        state, reason = record.state, record.reason
        now = anyio.current_time() if self._task_group is not None else None
        if state == "connecting" and now is not None and now > record.connect_deadline:
            state = "unavailable"
            reason = (
                f"no answer within connect_timeout ({record.config.connect_timeout:g} s, "
                f"mcp_servers.{record.name}.connect_timeout)"
            )
        retry_in = None
        if state == "unavailable" and record.retry_at is not None and now is not None:
            retry_in = max(0.0, record.retry_at - now)
        return ServerStatus(
            name=record.name,
            transport=transport_of(record.config),
            state=state,
            reason=reason,
            tool_count=len(record.tools) if state == "connected" else record.last_tool_count,
            filtered_count=len(record.filtered),
            unmatched_patterns=record.unmatched,
            protocol_version=connection.protocol_version if connection is not None else None,
            retry_in=retry_in,
            log_path=self._log_path(record),
            stderr_tail=record.stderr_tail if state == "unavailable" else (),
        )
