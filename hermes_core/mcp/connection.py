"""One open session with one MCP server: connect, list every page, call, close.

:func:`open_connection` is an async context manager: entering it expands ``${VAR}``, starts the
stdio child (or opens the streamable HTTP client), negotiates the protocol era and lists the
tools, all within ``connect_timeout``; leaving it closes the session and ends a stdio child with
every process it started (:mod:`hermes_core.mcp.stdio`). The connection notices at once when the
server goes away (its output stream ends, or its process exits) and says so through
:meth:`McpConnection.wait_closed`. A stdio child's standard error goes to its log file
(:mod:`hermes_core.mcp.serverlog`); a failed connect names that file and shows its last lines.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio
import mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage

from hermes_core.config import McpServerConfig
from hermes_core.errors import ConfigError, HermesError
from hermes_core.mcp.expand import expand_server_config
from hermes_core.mcp.interpreter import find_command, is_python
from hermes_core.mcp.serverlog import ServerLog, server_log_path
from hermes_core.mcp.stdio import StdioTransport
from hermes_core.mcp.transport import transport_of
from hermes_core.paths import Environment
from hermes_core.version import __version__

__all__ = [
    "MAX_LIST_PAGES",
    "McpConnectError",
    "McpConnection",
    "describe_failure",
    "list_all_tools",
    "open_connection",
    "transport_of",
]

MAX_LIST_PAGES = 1000
"""A server whose ``tools/list`` never stops paging is cut off here."""

CLIENT_INFO = mcp_types.Implementation(name="hermes-core", version=__version__)


class McpConnectError(HermesError):
    """A server that could not be connected; ``reason`` says why in one line, for the status.

    For a stdio server, ``log_path`` is its log file and ``stderr_tail`` the last lines it wrote
    to its standard error in this attempt (see :meth:`output_lines`).
    """

    def __init__(
        self,
        server: str,
        reason: str,
        *,
        log_path: Path | None = None,
        stderr_tail: tuple[str, ...] = (),
    ) -> None:
        self.server = server
        self.reason = reason
        self.log_path = log_path
        self.stderr_tail = stderr_tail
        super().__init__(f"MCP server {server!r}: {reason}")

    def output_lines(self) -> list[str]:
        """Where the server's standard error is, and its last lines, ready to print."""
        return describe_output(self.log_path, self.stderr_tail)


def describe_output(log_path: Path | None, tail: tuple[str, ...]) -> list[str]:
    """``its standard error (last lines, PATH):`` and the lines, indented; or only where the log
    is when the server wrote nothing."""
    if log_path is None:
        return []
    if not tail:
        return [f"its standard error is logged in {log_path} (nothing written this time)"]
    return [f"its standard error (last lines, {log_path}):", *(f"  {line}" for line in tail)]


class _WatchedReadStream:
    """The transport's read stream, reporting its end (the server went away) to a callback.

    It delegates every call, so the SDK sees the stream it built; only the end of the stream
    is observed, which is how a dead server is noticed without waiting for the next call.
    """

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None]
    ) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, when the inner stream carries one."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _WatchedTransport:
    """A transport whose read stream reports its end through ``on_end``."""

    def __init__(
        self,
        inner: Any,
        on_end: Callable[[], None],
    ) -> None:
        self._inner = inner
        self._on_end = on_end

    async def __aenter__(self) -> TransportStreams:
        read_stream, write_stream = await self._inner.__aenter__()
        watched: ReadStream[SessionMessage | Exception] = _WatchedReadStream(
            read_stream, self._on_end
        )
        writer: WriteStream[SessionMessage] = write_stream
        return watched, writer

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc_val, exc_tb)
        return result


class McpConnection:
    """An open, listed session with the server ``name``.

    ``tools`` is the complete listing (all pages) of the last :meth:`refresh_tools`, and
    ``listing`` the same tools in their wire form (what tool manifests keep). Calls may
    come from any task of the event loop. ``log`` is a stdio server's standard error (its file
    and last lines; ``None`` over HTTP).
    """

    def __init__(self, name: str, config: McpServerConfig, log: ServerLog | None = None) -> None:
        self.name = name
        self.config = config
        """The entry with ``${VAR}`` expanded."""
        self.log = log
        self.client: Client
        self.tools: list[mcp_types.Tool] = []
        self.listing: list[dict[str, Any]] = []
        self.close_reason: str | None = None
        self.tools_changed = anyio.Event()
        """Set when the server sends ``notifications/tools/list_changed``."""
        self._closed = anyio.Event()

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol version (``2025-11-25``, ``2026-07-28``...)."""
        return self.client.protocol_version

    @property
    def closed(self) -> bool:
        """Whether the server went away or the connection failed."""
        return self._closed.is_set()

    def mark_closed(self, reason: str) -> None:
        """Record that the connection is gone; the first reason is kept."""
        if self.close_reason is None:
            self.close_reason = reason
        self._closed.set()

    async def wait_closed(self) -> str:
        """Wait until the connection is gone; return why."""
        await self._closed.wait()
        return self.close_reason or "the connection closed"

    async def refresh_tools(self) -> list[mcp_types.Tool]:
        """List the tools again (every page) and keep the new listing."""
        self.tools = await list_all_tools(self.client, self.name)
        self.listing = [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in self.tools
        ]
        return self.tools

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], *, timeout: float
    ) -> mcp_types.CallToolResult:
        """Call ``tool`` (its original MCP name) with ``arguments``, waiting at most ``timeout``
        seconds. Raises the SDK's ``MCPError``; a closed connection is also recorded."""
        try:
            return await self.client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                self.mark_closed("the connection closed during a call")
            raise


async def list_all_tools(client: Client, server: str) -> list[mcp_types.Tool]:
    """Every tool of the server, following ``nextCursor`` through all pages."""
    tools: list[mcp_types.Tool] = []
    seen_cursors: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
        if cursor in seen_cursors:
            raise McpConnectError(server, f"tools/list repeated the cursor {cursor!r}")
        seen_cursors.add(cursor)
    raise McpConnectError(server, f"tools/list did not end after {MAX_LIST_PAGES} pages")


def describe_failure(exc: BaseException) -> str:
    """Why a connection failed or ended, in one line (for statuses and error results); looks
    inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, McpConnectError):
        return exc.reason
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.message}"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_NO_MODULE = re.compile(r"No module named '?([A-Za-z0-9_.]+)'?")


def _child_environment(config: McpServerConfig, env: Environment) -> dict[str, str]:
    """The small safe environment the SDK gives a server (``HOME``, ``PATH``...), plus the
    entry's ``env``: secrets go in ``env`` only. The safe variables are the host's
    ``Environment``'s, not the process's, so that each host's servers see that host's (the SDK
    reads ``os.environ``); a value that is a shell function (``()...``) is left out, as the SDK
    leaves it out."""
    safe = {
        name: value
        for name in DEFAULT_INHERITED_ENV_VARS
        if (value := env.get(name)) is not None and not value.startswith("()")
    }
    return safe | dict(config.env)


def _stdio_transport(
    name: str, config: McpServerConfig, env: Environment, log: ServerLog
) -> StdioTransport | Any:
    assert config.command is not None
    cwd = env.cwd if config.cwd is None else env.cwd / Path(config.cwd).expanduser()
    if not cwd.is_dir():
        raise McpConnectError(name, f"the working directory {str(cwd)!r} does not exist")
    if sys.platform == "win32":  # no process groups: the SDK's Job Object ends the tree
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env=_child_environment(config, env),
            cwd=cwd,
        )
        return stdio_client(params)
    return StdioTransport(
        config.command, config.args, environment=_child_environment(config, env), cwd=cwd, log=log
    )


def _explained(
    failure: McpConnectError,
    config: McpServerConfig,
    env: Environment,
    transport: Any,
    log: ServerLog | None,
) -> McpConnectError:
    """``failure`` with what the stdio child left behind: how it exited, which interpreter could
    not import a module, where its standard error is and the last lines of it."""
    if log is None:
        return failure
    reason = failure.reason
    status = getattr(transport, "exited_on_its_own", None)
    if status is not None:
        ended = f"was ended by signal {-status}" if status < 0 else f"exited with status {status}"
        reason = f"cannot connect: the server {ended} before it answered"
    for line in reversed(log.tail):
        missing = _NO_MODULE.search(line)
        if missing is not None and config.command is not None:
            reason = f"{reason}; {_interpreter_note(config, env, missing.group(1))}"
            break
    explained = McpConnectError(failure.server, reason, log_path=log.path, stderr_tail=log.tail)
    explained.__cause__ = failure.__cause__
    return explained


def _interpreter_note(config: McpServerConfig, env: Environment, module: str) -> str:
    """Which program ran and could not import ``module``: the command as found on the child's
    ``PATH``, so a bare ``python3`` that is not the Python you meant shows as such."""
    assert config.command is not None
    found = find_command(config.command, _child_environment(config, env).get("PATH"))
    if is_python(config.command):
        return f"the interpreter {found} has no module named {module!r}"
    return f"{config.command} ({found}) has no module named {module!r}"


@asynccontextmanager
async def open_connection(
    name: str,
    config: McpServerConfig,
    env: Environment,
) -> AsyncIterator[McpConnection]:
    """Connect to server ``name`` and list its tools within ``config.connect_timeout``.

    Raises :class:`McpConnectError` naming the reason (an unset ``${VAR}``, a command that
    cannot start, a refused handshake, no answer in time); for a stdio server it also names the
    log file the child's standard error goes to and carries its last lines.
    """
    try:
        expanded = expand_server_config(name, config, env)
    except ConfigError as exc:
        raise McpConnectError(name, str(exc)) from None
    log = ServerLog(server_log_path(env, name)) if expanded.url is None else None
    transport: Any = None
    connected = False
    failure: McpConnectError | None = None
    scope = anyio.CancelScope(deadline=anyio.current_time() + config.connect_timeout)
    with scope:
        try:
            async with AsyncExitStack() as stack:
                if expanded.url is not None:
                    http = await stack.enter_async_context(
                        create_mcp_http_client(headers=dict(expanded.headers))
                    )
                    inner: Any = streamable_http_client(expanded.url, http_client=http)
                else:
                    assert log is not None
                    inner = transport = _stdio_transport(name, expanded, env, log)
                connection = McpConnection(name, expanded, log)

                async def on_message(message: object) -> None:
                    if isinstance(message, mcp_types.ToolListChangedNotification):
                        connection.tools_changed.set()

                connection.client = Client(
                    _WatchedTransport(
                        inner, lambda: connection.mark_closed("the server closed the connection")
                    ),
                    cache=None,
                    client_info=CLIENT_INFO,
                    message_handler=on_message,
                )
                try:
                    await stack.enter_async_context(connection.client)
                    await connection.refresh_tools()
                except McpConnectError:
                    raise
                except Exception as exc:
                    raise McpConnectError(name, f"cannot connect: {describe_failure(exc)}") from exc
                connected = True
                scope.deadline = math.inf
                yield connection
        except McpConnectError as exc:
            if connected:
                raise
            failure = exc
        except Exception as exc:
            if connected:
                raise
            failure = McpConnectError(name, f"cannot connect: {describe_failure(exc)}")
            failure.__cause__ = exc
    if failure is None and scope.cancelled_caught and not connected:
        failure = McpConnectError(
            name,
            f"no answer within connect_timeout ({config.connect_timeout:g} s, "
            f"mcp_servers.{name}.connect_timeout)",
        )
    if failure is not None:
        raise _explained(failure, expanded, env, transport, log)
