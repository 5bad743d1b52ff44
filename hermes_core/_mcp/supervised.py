"""One supervised MCP server: the only writer of its state, through named transitions.

A :class:`SupervisedServer` holds all hermes knows of one configured server (state and reason,
the connect attempt, the backoff, its tools and their listing, its connection) and changes it
only in its transitions: :meth:`~SupervisedServer.prepare` (manifest read, known tools
published, start plan), :meth:`~SupervisedServer.launch`, a listing that came (connected), an
end or failure (unavailable, then the backoff), :meth:`~SupervisedServer.note_timeout`,
:meth:`~SupervisedServer.stop`, :meth:`~SupervisedServer.withdraw_tools`. The collection,
:class:`~hermes_core._mcp.supervisor.McpSupervisor`, only reads its attributes and gives it what
every server shares (:class:`Supervision`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from hermes_core._config import McpServerConfig
from hermes_core._mcp.attempt import ConnectAttempt
from hermes_core._mcp.backoff import Backoff
from hermes_core._mcp.calling import call_connected
from hermes_core._mcp.filters import ToolFilter
from hermes_core._mcp.names import may_name_a_tool_of
from hermes_core._mcp.results import unavailable_result
from hermes_core._mcp.serverlog import server_log_path
from hermes_core._mcp.serving import connect_and_serve
from hermes_core._mcp.startup import (
    McpStartup,
    StartPlan,
    failed_recently,
    failure_inputs,
    start_plan,
    without_stale_failure,
)
from hermes_core._mcp.status import FILTERED, SHOWN_IN_STATUS, ServerState, ServerStatus
from hermes_core._mcp.tools import server_tools
from hermes_core._mcp.transport import transport_of
from hermes_core._paths import Environment
from hermes_core._shown import duration
from hermes_core._tools import Tool, ToolHandler, ToolResult

if TYPE_CHECKING:
    from hermes_core._mcp.connection import McpConnection
    from hermes_core._mcp.manifests import ManifestStore, ServerManifest

__all__ = ["SupervisedServer", "Supervision"]

log = logging.getLogger("hermes_core._mcp")

_IN_STATUS = {SHOWN_IN_STATUS: True}


@dataclass(frozen=True)
class Supervision:
    """What every server of one supervisor shares: the environment, the manifest store, the
    reconnect policy, where tool changes go (``notify``) and how a tool's handler is made
    (``handler(server, tool)``)."""

    env: Environment
    notify: Callable[[str, list[Tool]], None]
    handler: Callable[[str, str], ToolHandler]
    manifests: ManifestStore | None = None
    reconnect: bool = True
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    stable_uptime: float = 60.0


@dataclass(eq=False)
class _Run:
    """Handles of one supervising task: its cancel scope and end event."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)


class SupervisedServer:
    """One configured server and its state; the only writer of that state."""

    def __init__(self, name: str, config: McpServerConfig, supervision: Supervision) -> None:
        self.name = name
        self.config = config
        self.filter = ToolFilter.from_lists(config.include, config.exclude)
        self._with = supervision
        self.state: ServerState = "connecting"
        self.reason: str | None = None
        self.connection: McpConnection | None = None
        self.tools: list[Tool] = []
        self._last_tool_count = 0
        self.filtered: dict[str, str] = {}
        """Safe name -> original name of every filtered tool of the last listing."""
        self.published: frozenset[str] = frozenset()
        """The tool names of the last listing, kept while the server is down."""
        self._unmatched: tuple[str, ...] = ()
        self._warned_patterns: set[str] = set()
        self._attempt = ConnectAttempt.none()
        self._retry_at: float | None = None
        self._stderr_tail: tuple[str, ...] = ()
        self.run: _Run | None = None
        """The supervising task's handles, made on the event loop when it starts; ``None`` while
        nothing started it (a known server is started by its first call)."""
        self._manifest: ServerManifest | None = None
        self._listing: Sequence[Mapping[str, Any]] = ()
        """The listing (wire form) the published tools were built from."""
        self._known = False
        """The published tools come from the manifest, not from a listing of this process."""
        self.wait_on_search = False
        """Started in the background with its tools unknown: a search waits for its first
        attempt."""
        self._failed_at: float | None = None
        if not config.enabled:
            self.state = "disabled"
            self.reason = f"disabled (mcp_servers.{name}.enabled is false)"

    # Start --------------------------------------------------------------------------------------

    def prepare(self, startup: McpStartup, now: float) -> StartPlan:
        """Read the manifest, publish its known tools, and decide the start plan."""
        manifests = self._with.manifests
        manifest = manifests.load(self.name, self.config) if manifests is not None else None
        manifest = without_stale_failure(manifest, self._inputs, self.name)
        self._manifest = manifest
        if manifest is not None and manifest.tools is not None:
            self._register(manifest.tools, known=True)
            self.state = "known"
        plan = start_plan(startup, manifest, self.config, now, self.name)
        failed = failed_recently(manifest, self.config, now)
        failure = manifest.failure if manifest is not None else None
        if plan == "skip" and failed and failure is not None:
            self.state = "unavailable"
            self.reason = failure.reason
            self._failed_at = failure.at
            log.warning(
                "MCP server %r is unavailable (%s); recorded %s ago, it is not tried again "
                "before mcp_servers.%s.retry_interval (%g s) has passed, or with --refresh",
                self.name,
                self.reason,
                duration(now - failure.at),
                self.name,
                self.config.retry_interval,
                extra=_IN_STATUS,
            )
        if plan == "background" and not self._known and not failed:
            self.wait_on_search = True
        return plan

    def _inputs(self) -> str:
        return failure_inputs(self.name, self.config, self._with.env)

    def launch(self, task_group: anyio.abc.TaskGroup) -> None:
        """Begin a connect attempt and start the supervising task in ``task_group``."""
        self.run = _Run()
        self._begin_attempt()
        task_group.start_soon(self._supervise, self.run, name=f"mcp:{self.name}")

    async def stop(self) -> None:
        """End the supervising task (and with it the connection) and withdraw the tools."""
        if self.run is not None:
            self.run.scope.cancel()
            await self.run.done.wait()
        self.withdraw_tools()

    # Attempts -----------------------------------------------------------------------------------

    def _begin_attempt(self) -> None:
        self.state = "connecting"
        self._retry_at = None
        self._attempt = ConnectAttempt(self.config.connect_timeout)

    def _end_attempt(self) -> None:
        self.wait_on_search = False
        self._attempt.end()

    async def wait_attempt(self, *, search: bool = False) -> None:
        """Wait for the current connect attempt, at most until its deadline (for a
        ``search``, its search deadline)."""
        if self.state != "connecting":
            return
        await self._attempt.wait(search=search)
        self.note_timeout()

    def note_timeout(self) -> None:
        """Record now that the connect attempt ran past its ``connect_timeout``: the attempt
        itself gives up a moment later, and a one-shot host may be gone by then, so the failure
        would go unrecorded and the next read-only command would wait again."""
        attempt = self._attempt
        if self.state != "connecting" or attempt.timed_out or not attempt.past_deadline():
            return
        attempt.timed_out = True
        self._failed_at = time.time()
        reason = self._timeout_reason()
        manifests = self._with.manifests
        if manifests is not None:
            self._manifest = manifests.save_failure(
                self.name, self.config, reason, self._manifest, self._inputs()
            )
        if not self._with.reconnect:
            log.warning("MCP server %r is unavailable (%s)", self.name, reason, extra=_IN_STATUS)

    def _timeout_reason(self) -> str:
        return (
            f"no answer within connect_timeout ({self.config.connect_timeout:g} s, "
            f"mcp_servers.{self.name}.connect_timeout)"
        )

    async def connection_for_call(
        self, task_group: anyio.abc.TaskGroup | None
    ) -> McpConnection | None:
        """The open connection, waiting for the current attempt (starting one when nothing
        started this server and ``task_group`` runs); ``None`` when there is none."""
        connection = self.connection
        if connection is not None and not connection.closed:
            return connection
        if self.state == "disabled" or task_group is None:
            return None
        if self.run is None:  # known (or skipped) and not started: this call starts it
            self.launch(task_group)
        await self.wait_attempt()
        connection = self.connection
        return connection if connection is not None and not connection.closed else None

    # Supervision --------------------------------------------------------------------------------

    async def _supervise(self, run: _Run) -> None:
        keep_tools = False
        try:
            with run.scope:
                keep_tools = await self._connect_until_given_up()
        finally:
            self.connection = None
            if not keep_tools:
                self.withdraw_tools()
            run.done.set()

    async def _connect_until_given_up(self) -> bool:
        """Connect, serve, and after each end back off and connect again; without
        ``reconnect``, give up after the first end and return that the tools stay."""
        backoff = Backoff(self._with.backoff_base, self._with.backoff_max, self._with.stable_uptime)
        while True:
            if self.state != "connecting":
                self._begin_attempt()
            ended = await connect_and_serve(
                self.name, self.config, self._with.env, opened=self._connected, listed=self._listed
            )
            if ended.stderr_tail is not None:
                self._stderr_tail = ended.stderr_tail
            # A timeout noted already is recorded and told of.
            told = self._attempt.timed_out and not ended.opened
            self._unavailable(ended.reason, connect_failed=not ended.opened and not told)
            self._end_attempt()
            where = self._log_hint()
            if not self._with.reconnect:
                if not told:
                    log.warning(
                        "MCP server %r is unavailable (%s)%s",
                        self.name,
                        ended.reason,
                        where,
                        extra=_IN_STATUS,
                    )
                return True  # known tools stay published, their calls say why
            await self._back_off(backoff.next_delay(ended.uptime), ended.reason, where)

    async def _back_off(self, delay: float, reason: str, where: str) -> None:
        log.warning(
            "MCP server %r is unavailable (%s); reconnecting in %g s%s",
            self.name,
            reason,
            delay,
            where,
        )
        self._retry_at = anyio.current_time() + delay
        await anyio.sleep(delay)

    def _connected(self, connection: McpConnection) -> None:
        self.connection = connection
        self._listed(connection)
        self._end_attempt()

    def _listed(self, connection: McpConnection) -> None:
        """A listing came: save it, and publish it unless the known tools are the same."""
        listing = connection.listing
        manifests = self._with.manifests
        if manifests is not None:
            self._manifest = manifests.save_listing(
                self.name, self.config, listing, connection.protocol_version
            )
        same = self._known and list(self._listing) == listing
        self.state = "connected"
        self.reason = None
        self._failed_at = None
        self._known = False
        if not same:
            self._register(listing, known=False)

    def _register(self, listing: Sequence[Mapping[str, Any]], *, known: bool) -> None:
        """Build and publish the tools of ``listing``."""
        built = server_tools(self.name, self.config, listing, self._with.handler)
        tools, unmatched = built.tools, built.unmatched_patterns
        self._listing = listing
        self._known = known
        self.tools = tools
        self._last_tool_count = len(tools)
        self.published = frozenset(tool.name for tool in tools)
        self.filtered = built.filtered
        self._unmatched = unmatched
        for pattern in unmatched:
            if pattern in self._warned_patterns:
                continue
            self._warned_patterns.add(pattern)
            log.warning(
                "MCP server %r: the include/exclude pattern %r matches none of its tools "
                "(mcp_servers.%s)",
                self.name,
                pattern,
                self.name,
                extra=_IN_STATUS,
            )
        self._with.notify(self.name, list(tools))

    def _unavailable(self, reason: str, *, connect_failed: bool) -> None:
        """The server is unavailable: a failed connect is recorded in its manifest; its tools
        are withdrawn unless they are the known ones (searchable still, calls say why)."""
        self.state = "unavailable"
        self.reason = reason
        self.connection = None
        self._failed_at = time.time()
        manifests = self._with.manifests
        if connect_failed and manifests is not None:
            self._manifest = manifests.save_failure(
                self.name, self.config, reason, self._manifest, self._inputs()
            )
        if not self._known:
            self.withdraw_tools()

    def withdraw_tools(self) -> None:
        """Withdraw the published tools (``notify(server, [])``), if there are any."""
        if self.tools:
            self.tools = []
            self._with.notify(self.name, [])

    def _log_hint(self) -> str:
        path = self._log_path()
        return f"; its standard error is in {path}" if path and self._stderr_tail else ""

    def _log_path(self) -> Path | None:
        return server_log_path(self._with.env, self.name) if self.config.url is None else None

    # What the collection reads ------------------------------------------------------------------

    def status(self, *, running: bool) -> ServerStatus:
        """The status now; ``running``: the supervisor runs on the event loop."""
        connection = self.connection
        state, reason = self.state, self.reason
        now = anyio.current_time() if running else None
        if state == "connecting" and running and self._attempt.past_deadline():
            state, reason = "unavailable", self._timeout_reason()
        retry_in = None
        if state == "unavailable" and self._retry_at is not None and now is not None:
            retry_in = max(0.0, self._retry_at - now)
        manifest = self._manifest
        return ServerStatus(
            name=self.name,
            transport=transport_of(self.config),
            state=state,
            reason=reason,
            tool_count=len(self.tools) if self.tools else self._last_tool_count,
            filtered_count=len(self.filtered),
            unmatched_patterns=self._unmatched,
            protocol_version=connection.protocol_version if connection is not None else None,
            retry_in=retry_in,
            log_path=self._log_path(),
            stderr_tail=self._stderr_tail if state == "unavailable" else (),
            manifest_age=manifest.age(time.time()) if manifest is not None else None,
            failed_at=self._failed_at if state == "unavailable" else None,
            recorded=state == "unavailable" and self.run is None,
        )

    def may_own(self, name: str) -> bool:
        """Whether ``name`` is a tool of this server: one of its last listing, or, before a
        first listing, a name its prefix leads to."""
        if self.published:
            return name in self.published
        return may_name_a_tool_of(name, self.name)  # before a first listing, its prefix tells

    async def call(
        self, tool: str, arguments: Mapping[str, Any], task_group: anyio.abc.TaskGroup | None
    ) -> ToolResult:
        """Call ``tool`` (its original MCP name), waiting for this server while it connects,
        then for the call up to the server's ``timeout`` (see
        :meth:`~hermes_core._mcp.supervisor.McpSupervisor.call_tool`)."""
        if not self.filter.allows(tool):
            return ToolResult.error(FILTERED, self.filter.describe_refusal(self.name, tool))
        connection = await self.connection_for_call(task_group)
        if connection is None:
            status = self.status(running=task_group is not None)
            return unavailable_result(self.name, status.reason or "it is still connecting")
        return await call_connected(connection, self.name, self.config, tool, arguments)
