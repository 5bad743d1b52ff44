"""One open session with one MCP server: connect, list every page, call, close.

:func:`open_connection` is an async context manager: entering it expands ``${VAR}``, starts the
stdio child (or opens the streamable HTTP client), negotiates the protocol era and lists the
tools, all within ``connect_timeout``; leaving it closes the session, and the SDK ends a stdio
child by closing its input, then SIGTERM, then SIGKILL after a grace period. The connection
notices at once when the server goes away (its output stream ends) and says so through
:meth:`McpConnection.wait_closed`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TextIO

import anyio
import mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage

from hermes_core import __version__
from hermes_core.config import McpServerConfig
from hermes_core.errors import ConfigError, HermesError
from hermes_core.mcp.expand import expand_server_config
from hermes_core.paths import Environment

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
    """A server that could not be connected; ``reason`` says why in words for the status."""

    def __init__(self, server: str, reason: str) -> None:
        self.server = server
        self.reason = reason
        super().__init__(f"MCP server {server!r}: {reason}")


def transport_of(config: McpServerConfig) -> str:
    """``"stdio"`` for a command entry, ``"http"`` for a URL entry."""
    return "http" if config.url is not None else "stdio"


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

    ``tools`` is the complete listing (all pages) of the last :meth:`refresh_tools`. Calls may
    come from any task of the event loop.
    """

    def __init__(self, name: str, config: McpServerConfig) -> None:
        self.name = name
        self.config = config
        """The entry with ``${VAR}`` expanded."""
        self.client: Client
        self.tools: list[mcp_types.Tool] = []
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


def _stdio_transport(
    name: str, config: McpServerConfig, env: Environment, errlog: TextIO | None
) -> Any:
    assert config.command is not None
    cwd = env.cwd if config.cwd is None else env.cwd / Path(config.cwd).expanduser()
    if not cwd.is_dir():
        raise McpConnectError(name, f"the working directory {str(cwd)!r} does not exist")
    # The SDK merges only its small safe environment with these: secrets go in ``env`` only.
    params = StdioServerParameters(
        command=config.command, args=list(config.args), env=dict(config.env), cwd=cwd
    )
    return stdio_client(params, errlog=errlog if errlog is not None else sys.stderr)


@asynccontextmanager
async def open_connection(
    name: str,
    config: McpServerConfig,
    env: Environment,
    *,
    errlog: TextIO | None = None,
) -> AsyncIterator[McpConnection]:
    """Connect to server ``name`` and list its tools within ``config.connect_timeout``.

    Raises :class:`McpConnectError` naming the reason (an unset ``${VAR}``, a command that
    cannot start, a refused handshake, no answer in time). ``errlog`` receives a stdio
    child's standard error (the process's standard error by default).
    """
    try:
        expanded = expand_server_config(name, config, env)
    except ConfigError as exc:
        raise McpConnectError(name, str(exc)) from None
    connected = False
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
                    inner = _stdio_transport(name, expanded, env, errlog)
                connection = McpConnection(name, expanded)

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
        except McpConnectError:
            raise
        except Exception as exc:
            if not connected:
                raise McpConnectError(name, f"cannot connect: {describe_failure(exc)}") from exc
            raise
    if scope.cancelled_caught and not connected:
        raise McpConnectError(
            name,
            f"no answer within connect_timeout ({config.connect_timeout:g} s, "
            f"mcp_servers.{name}.connect_timeout)",
        )
