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

With a :class:`~hermes_core.mcp.manifests.ManifestStore` the supervisor keeps each server's tool
manifest: every successful listing is saved, every failed connect recorded, and at start a
server with a manifest has its tools published at once (*known*) before any process starts.
:func:`~hermes_core.mcp.startup.start_plan` then decides per server whether to leave it alone,
connect it in the background or wait for it. A call to a known tool waits for its own server
only (up to its ``connect_timeout``), starting it first when nothing did; a real listing that
differs from the manifest replaces the tools. Known tools of a server that fails to connect stay
published, and their calls say why they cannot run. The MCP SDK is imported only when a server
is connected or called, so a host answered from manifests never loads it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

import anyio
import anyio.abc

from hermes_core.config import McpServerConfig
from hermes_core.mcp.backoff import Backoff
from hermes_core.mcp.filters import ToolFilter
from hermes_core.mcp.names import may_name_a_tool_of, mcp_tool_name
from hermes_core.mcp.results import MCP_ERROR, unavailable_result
from hermes_core.mcp.serverlog import server_log_path
from hermes_core.mcp.startup import (
    UNKNOWN_TOOLS_WAIT,
    McpStartup,
    StartPlan,
    failed_recently,
    start_plan,
)
from hermes_core.mcp.tools import server_tools
from hermes_core.mcp.transport import transport_of
from hermes_core.paths import Environment
from hermes_core.shown import duration
from hermes_core.tools import Tool, ToolHandler, ToolResult

if TYPE_CHECKING:
    from hermes_core.mcp.connection import McpConnection
    from hermes_core.mcp.manifests import ManifestStore, ServerManifest

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

ServerState = Literal["connecting", "connected", "known", "unavailable", "disabled"]
"""``known``: its tools come from its tool manifest and no process of it runs."""
ToolsChanged = Callable[[str, list[Tool]], None]
"""``on_tools_changed(server, tools)``: the server's complete tool list now; empty when its
tools are gone (it dropped, was removed, or failed to connect)."""
ConnectProgress = Callable[[list["ServerStatus"]], None]
"""``on_progress(statuses)``: while the start waits for servers, their statuses, each time one
of them settles (and once before waiting)."""

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
    search_deadline: float = math.inf
    """Until when a search waits for the current attempt (``UNKNOWN_TOOLS_WAIT``)."""
    retry_at: float | None = None
    stderr_tail: tuple[str, ...] = ()
    run: _Run | None = None
    """The supervising task's handles, made on the event loop when it starts; ``None`` while
    nothing started it (a known server is started by its first call)."""
    attempt: anyio.Event | None = None
    """Set when the current connect attempt ends, connected or not."""
    manifest: ServerManifest | None = None
    listing: Sequence[Mapping[str, Any]] = ()
    """The listing (wire form) the published tools were built from."""
    known: bool = False
    """The published tools come from the manifest, not from a listing of this process."""
    wait_on_search: bool = False
    """Started in the background with its tools unknown: a search waits for its first attempt."""
    failed_at: float | None = None
    timed_out: bool = False
    """The current connect attempt ran past its ``connect_timeout`` and that was recorded."""


@dataclass(eq=False)
class _Run:
    """Handles of one supervising task: its cancel scope and end event."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)


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
    (:class:`~hermes_core.mcp.startup.McpStartup`); ``on_progress`` hears how the servers the
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
        self._env = env
        self._manifests = manifests
        self._startup = startup or McpStartup()
        self._on_progress = on_progress
        self._on_tools_changed = on_tools_changed
        self._reconnect = reconnect
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._stable_uptime = stable_uptime
        self._servers: dict[str, _Server] = {}
        self._held: list[_Server] = []
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
        waited: list[_Server] = []
        for record in [r for r in self._servers.values() if r.state != "disabled"]:
            plan = self._prepare(record, now)
            if plan == "skip":
                continue
            if plan == "background" and self._startup.hold_background:
                self._held.append(record)
                continue
            self._launch(record)
            if plan == "wait":
                waited.append(record)
        await self._wait_attempts(waited, self._on_progress)

    async def aclose(self) -> None:
        """Disconnect every server and end every stdio child; withdraw all tools."""
        task_group, self._task_group = self._task_group, None
        if task_group is None:
            return
        for record in self._servers.values():
            self._note_timeout(record)
        task_group.cancel_scope.cancel()
        await task_group.__aexit__(None, None, None)
        for record in self._servers.values():
            self._clear_tools(record)

    def release_background(self) -> None:
        """Start the servers held back at start (``McpStartup.hold_background``) that nothing
        has started yet; later calls do nothing."""
        held, self._held = self._held, []
        for record in held:
            if record.run is None and self._task_group is not None and record.name in self._servers:
                self._launch(record)

    def starting_server_of(self, name: str) -> str | None:
        """The server whose tools are not known yet, still making its first connect (or held
        back at start), that ``name`` may be a tool of; ``None`` when there is none."""
        for record in self._servers.values():
            if record.wait_on_search and may_name_a_tool_of(name, record.name):
                return record.name
        return None

    async def wait_for_server(self, server: str) -> None:
        """Wait for ``server``'s connect attempt, up to its ``connect_timeout`` (starting it
        if nothing did), and for no other server."""
        record = self._servers.get(server)
        if record is not None and record.state != "disabled":
            await self._connection_for_call(record)

    async def wait_for_unknown(self) -> None:
        """Wait for the servers whose tools are not known yet and whose first connect is still
        under way (a host that did not wait at start, such as ``hermes serve``): a search must
        not miss a server only because it is still starting. Each is waited for up to its
        ``connect_timeout`` but no longer than :data:`~hermes_core.mcp.startup.UNKNOWN_TOOLS_WAIT`
        after its attempt began, so a hung server holds a search for seconds, not for its whole
        ``connect_timeout``. A server whose connect failed recently is not waited for. Those
        of them held back at start are started first; servers whose tools are known are not:
        a search answers from their manifests."""
        unknown = [r for r in self._servers.values() if r.wait_on_search]
        for record in unknown:
            if record.run is None and self._task_group is not None:
                self._launch(record)
        await self._wait_attempts(unknown, search=True)

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
            await self._wait_attempts([record])
        return self._status_of(record)

    async def remove(self, name: str) -> None:
        """Disconnect and forget the server ``name`` (``KeyError`` if there is none)."""
        record = self._servers.pop(name)
        if record.run is not None:
            record.run.scope.cancel()
            await record.run.done.wait()
        self._clear_tools(record)

    # What the host reads ----------------------------------------------------------------------

    def status(self) -> dict[str, ServerStatus]:
        """Every configured server's status, by name."""
        return {name: self._status_of(record) for name, record in self._servers.items()}

    def configs(self) -> dict[str, McpServerConfig]:
        """Every server's configuration as this supervisor runs it (with those added or
        replaced since it started), by name."""
        return {name: record.config for name, record in self._servers.items()}

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
            # Before a first listing the names are unknown: its prefix tells.
            known = name in record.published or (
                not record.published and may_name_a_tool_of(name, record.name)
            )
            if known:
                status = self._status_of(record)
                if status.state not in ("connected", "known"):
                    return unavailable_result(
                        record.name, status.reason or "it is still connecting"
                    )
        return None

    async def call_tool(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call ``tool`` (its original MCP name) of ``server``, waiting for that server alone
        while it connects (up to its ``connect_timeout``; a known server that nothing started
        is started now), then for the call up to the server's ``timeout``; every failure is an
        error result naming the server: filtered tool, unavailable server (with the reason,
        ``connect_timeout`` among them), timeout, protocol error."""
        record = self._servers.get(server)
        if record is None:
            return unavailable_result(server, "it is not configured")
        if not record.filter.allows(tool):
            return ToolResult.error(FILTERED, record.filter.describe_refusal(server, tool))
        connection = await self._connection_for_call(record)
        if connection is None:
            status = self._status_of(record)
            return unavailable_result(server, status.reason or "it is still connecting")
        from mcp import MCPError

        from hermes_core.mcp.connection import describe_failure
        from hermes_core.mcp.results import (
            normalize_call_result,
            protocol_error_result,
            timeout_result,
        )

        timeout = record.config.timeout
        # The SDK bounds each request by the timeout; this bounds the whole call (the SDK may
        # send more than one request for it), so the timeout counts the call and nothing else.
        with anyio.move_on_after(timeout):
            try:
                result = await connection.call_tool(tool, dict(arguments), timeout=timeout)
            except MCPError as exc:
                return protocol_error_result(server, tool, exc, timeout=timeout)
            except Exception as exc:
                return ToolResult.error(
                    MCP_ERROR,
                    f"MCP server {server!r} gave no usable answer to {tool!r}: "
                    f"{describe_failure(exc)}",
                )
            return normalize_call_result(
                result, server=server, limit=record.config.max_result_chars
            )
        return timeout_result(server, tool, timeout)

    # Supervision ------------------------------------------------------------------------------

    def _record(self, name: str, config: McpServerConfig) -> _Server:
        record = _Server(name, config, ToolFilter.from_lists(config.include, config.exclude))
        if not config.enabled:
            record.state = "disabled"
            record.reason = f"disabled (mcp_servers.{name}.enabled is false)"
        return record

    def _prepare(self, record: _Server, now: float) -> StartPlan:
        """Read the manifest of ``record``, publish its known tools, and decide its plan."""
        manifest = self._manifests.load(record.name, record.config) if self._manifests else None
        manifest = self._without_stale_failure(record, manifest)
        record.manifest = manifest
        if manifest is not None and manifest.tools is not None:
            self._register(record, manifest.tools, known=True)
            record.state = "known"
        plan = start_plan(self._startup, manifest, record.config, now, record.name)
        failed = failed_recently(manifest, record.config, now)
        failure = manifest.failure if manifest is not None else None
        if plan == "skip" and failed and failure is not None:
            record.state = "unavailable"
            record.reason = failure.reason
            record.failed_at = failure.at
            log.warning(
                "MCP server %r is unavailable (%s); recorded %s ago, it is not tried again "
                "before mcp_servers.%s.retry_interval (%g s) has passed, or with --refresh",
                record.name,
                record.reason,
                duration(now - failure.at),
                record.name,
                record.config.retry_interval,
                extra=_IN_STATUS,
            )
        if plan == "background" and not record.known and not failed:
            record.wait_on_search = True
        return plan

    def _without_stale_failure(
        self, record: _Server, manifest: ServerManifest | None
    ) -> ServerManifest | None:
        """``manifest`` without its recorded failure when the ``${VAR}`` values the entry
        names have changed since (a variable set in the environment or ``.env`` since), or the
        sign-in of a URL server has (``hermes mcp login``): the record tells of a server that
        is not the one that would start now."""
        if manifest is None or manifest.failure is None:
            return manifest
        if manifest.failure.inputs == self._inputs(record):
            return manifest
        log.debug("MCP server %r: its variables changed since its recorded failure", record.name)
        return None if manifest.tools is None else replace(manifest, failure=None)

    def _inputs(self, record: _Server) -> str:
        from hermes_core.mcp.expand import variables_fingerprint

        inputs = variables_fingerprint(record.config, self._env)
        if record.config.url is None:
            return inputs
        from hermes_core.mcp.oauth import sign_in_fingerprint

        return f"{inputs}:{sign_in_fingerprint(record.name, self._env)}"

    def _launch(self, record: _Server) -> None:
        assert self._task_group is not None
        record.run = _Run()
        self._begin_attempt(record)
        self._task_group.start_soon(self._supervise, record, record.run, name=f"mcp:{record.name}")

    def _begin_attempt(self, record: _Server) -> None:
        record.state = "connecting"
        record.retry_at = None
        now = anyio.current_time()
        record.connect_deadline = now + record.config.connect_timeout
        record.search_deadline = min(record.connect_deadline, now + UNKNOWN_TOOLS_WAIT)
        record.attempt = anyio.Event()
        record.timed_out = False

    def _end_attempt(self, record: _Server) -> None:
        record.wait_on_search = False
        if record.attempt is not None:
            record.attempt.set()

    async def _wait_attempt(self, record: _Server, *, search: bool = False) -> None:
        """Wait for the current connect attempt of ``record``, at most until its deadline (for
        a ``search``, its search deadline)."""
        attempt = record.attempt
        if record.state != "connecting" or attempt is None:
            return
        deadline = record.search_deadline if search else record.connect_deadline
        with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
            await attempt.wait()
        self._note_timeout(record)

    def _note_timeout(self, record: _Server) -> None:
        """Record now that the connect attempt of ``record`` ran past its ``connect_timeout``:
        the attempt itself gives up a moment later, and a one-shot host may be gone by then, so
        the failure would go unrecorded and the next read-only command would wait again."""
        if (
            record.state != "connecting"
            or record.timed_out
            or anyio.current_time() < record.connect_deadline
        ):
            return
        record.timed_out = True
        record.failed_at = time.time()
        reason = _timeout_reason(record)
        if self._manifests is not None:
            record.manifest = self._manifests.save_failure(
                record.name, record.config, reason, record.manifest, self._inputs(record)
            )
        if not self._reconnect:
            log.warning("MCP server %r is unavailable (%s)", record.name, reason, extra=_IN_STATUS)

    async def _wait_attempts(
        self,
        records: list[_Server],
        progress: ConnectProgress | None = None,
        *,
        search: bool = False,
    ) -> None:
        if not records:
            return

        def report() -> None:
            if progress is not None:
                progress([self._status_of(record) for record in records])

        async def wait_one(record: _Server) -> None:
            await self._wait_attempt(record, search=search)
            report()

        report()
        async with anyio.create_task_group() as group:
            for record in records:
                group.start_soon(wait_one, record)

    async def _connection_for_call(self, record: _Server) -> McpConnection | None:
        connection = record.connection
        if connection is not None and not connection.closed:
            return connection
        if record.state == "disabled" or self._task_group is None:
            return None
        if record.run is None:  # known (or skipped) and not started: this call starts it
            self._launch(record)
        await self._wait_attempt(record)
        connection = record.connection
        return connection if connection is not None and not connection.closed else None

    async def _supervise(self, record: _Server, run: _Run) -> None:
        from hermes_core.mcp.connection import McpConnectError, describe_failure, open_connection

        backoff = Backoff(self._backoff_base, self._backoff_max, self._stable_uptime)
        keep_tools = False
        try:
            with run.scope:
                while True:
                    if record.state != "connecting":
                        self._begin_attempt(record)
                    up_since: float | None = None
                    opened: McpConnection | None = None
                    try:
                        async with open_connection(
                            record.name, record.config, self._env
                        ) as connection:
                            opened = connection
                            up_since = anyio.current_time()
                            record.connection = connection
                            self._listed(record, connection)
                            self._end_attempt(record)
                            reason = await self._serve(record, connection)
                    except McpConnectError as exc:
                        reason = exc.reason
                        record.stderr_tail = exc.stderr_tail
                    except Exception as exc:
                        reason = f"the connection failed: {describe_failure(exc)}"
                    if opened is not None and opened.log is not None:
                        record.stderr_tail = opened.log.tail
                    # A timeout noted already is recorded and told of.
                    told = record.timed_out and opened is None
                    self._withdraw(record, reason, connect_failed=opened is None and not told)
                    self._end_attempt(record)
                    where = self._log_hint(record)
                    if not self._reconnect:
                        if told:
                            keep_tools = True
                            return
                        log.warning(
                            "MCP server %r is unavailable (%s)%s",
                            record.name,
                            reason,
                            where,
                            extra=_IN_STATUS,
                        )
                        keep_tools = True  # known tools stay published, their calls say why
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
            if not keep_tools:
                self._clear_tools(record)
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
                from hermes_core.mcp.connection import describe_failure

                return f"listing the changed tools failed: {describe_failure(exc)}"
            self._listed(record, connection)

    def _listed(self, record: _Server, connection: McpConnection) -> None:
        """A listing came: save it, and publish it unless the known tools are the same."""
        listing = connection.listing
        if self._manifests is not None:
            record.manifest = self._manifests.save_listing(
                record.name, record.config, listing, connection.protocol_version
            )
        same = record.known and list(record.listing) == listing
        record.state = "connected"
        record.reason = None
        record.failed_at = None
        record.known = False
        if not same:
            self._register(record, listing, known=False)

    def _register(
        self, record: _Server, listing: Sequence[Mapping[str, Any]], *, known: bool
    ) -> None:
        """Build and publish the tools of ``listing``."""
        built = server_tools(record.name, record.config, listing, self._handler)
        tools, filtered, unmatched = built.tools, built.filtered, built.unmatched_patterns
        record.listing = listing
        record.known = known
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

    def _withdraw(self, record: _Server, reason: str, *, connect_failed: bool) -> None:
        """The server is unavailable: a failed connect is recorded in its manifest; its tools
        are withdrawn unless they are the known ones (searchable still, calls say why)."""
        record.state = "unavailable"
        record.reason = reason
        record.connection = None
        record.failed_at = time.time()
        if connect_failed and self._manifests is not None:
            record.manifest = self._manifests.save_failure(
                record.name, record.config, reason, record.manifest, self._inputs(record)
            )
        if not record.known:
            self._clear_tools(record)

    def _clear_tools(self, record: _Server) -> None:
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
        if state == "connecting" and now is not None and now >= record.connect_deadline:
            state, reason = "unavailable", _timeout_reason(record)
        retry_in = None
        if state == "unavailable" and record.retry_at is not None and now is not None:
            retry_in = max(0.0, record.retry_at - now)
        manifest = record.manifest
        return ServerStatus(
            name=record.name,
            transport=transport_of(record.config),
            state=state,
            reason=reason,
            tool_count=len(record.tools) if record.tools else record.last_tool_count,
            filtered_count=len(record.filtered),
            unmatched_patterns=record.unmatched,
            protocol_version=connection.protocol_version if connection is not None else None,
            retry_in=retry_in,
            log_path=self._log_path(record),
            stderr_tail=record.stderr_tail if state == "unavailable" else (),
            manifest_age=manifest.age(time.time()) if manifest is not None else None,
            failed_at=record.failed_at if state == "unavailable" else None,
            recorded=state == "unavailable" and record.run is None,
        )


def _timeout_reason(record: _Server) -> str:
    return (
        f"no answer within connect_timeout ({record.config.connect_timeout:g} s, "
        f"mcp_servers.{record.name}.connect_timeout)"
    )
