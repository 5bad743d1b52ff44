"""One open session with one MCP server: connect, list every page, call, close.

:func:`open_connection` is an async context manager: entering it expands ``${VAR}``, starts the
stdio child (or opens the streamable HTTP client), negotiates the protocol era and lists the
tools, all within ``connect_timeout``; leaving it closes the session and ends a stdio child with
every process it started (:mod:`hermes_core._mcp.stdio`). The connection notices at once when the
server goes away (its output stream ends, or its process exits) and says so through
:meth:`McpConnection.wait_closed` (:mod:`hermes_core._mcp.watched`).

Each ``tools/list`` answer is screened tool by tool before the SDK reads it
(:mod:`hermes_core._mcp.listing`). A stdio child's standard error goes to its log file
(:mod:`hermes_core._mcp.serverlog`); a failed connect names that file and shows its last lines
(:class:`~hermes_core._mcp.failures.McpConnectError`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from hermes_core._config import McpServerConfig
from hermes_core._errors import ConfigError
from hermes_core._mcp.elicitation import FormAnswerer, form_answerer, refusal_note
from hermes_core._mcp.expand import expand_server_config
from hermes_core._mcp.failures import (
    McpConnectError,
    describe_failure,
    describe_output,
    innermost,
)
from hermes_core._mcp.http_answers import bound_json_answers
from hermes_core._mcp.interpreter import find_command, is_python
from hermes_core._mcp.launch import (
    child_environment,
    launch_args,
    launch_refusal,
    missing_module_note,
    server_cwd,
)
from hermes_core._mcp.listing import (
    MAX_LIST_PAGES,
    ListingScreen,
    SkippedTool,
    list_all_tools,
    screen_tools,
)
from hermes_core._mcp.loopback import SignIn
from hermes_core._mcp.oauth import auth_for
from hermes_core._mcp.refused import RefusedCredentials
from hermes_core._mcp.serverlog import ServerLog, server_log_path
from hermes_core._mcp.stdio import StdioTransport
from hermes_core._mcp.transport import transport_of
from hermes_core._mcp.watched import WatchedTransport
from hermes_core._paths import Environment
from hermes_core._progress import ProgressReport, progress_listener
from hermes_core._version import __version__

# Re-exported from the modules they moved to: the names this module has always offered.
__all__ = [
    "MAX_LIST_PAGES",
    "ListingScreen",
    "McpConnectError",
    "McpConnection",
    "SkippedTool",
    "describe_failure",
    "describe_output",
    "list_all_tools",
    "open_connection",
    "screen_tools",
    "transport_of",
]

log = logging.getLogger("hermes_core._mcp")

CLIENT_INFO = mcp_types.Implementation(name="hermes-core", version=__version__)


RELIST_SECONDS = 1.0
"""The least time between two listings a server's ``tools/list_changed`` asks for."""


class McpConnection:
    """An open, listed session with the server ``name``.

    ``tools`` is the complete listing (all pages) of the last :meth:`refresh_tools`, without
    the tools :attr:`screen` skipped, and ``listing`` the same tools in their wire form (what
    tool manifests keep). Calls may
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
        self.cut_off: str | None = None
        """Why hermes ended the server itself (a line past ``_jsonrpc_lines.MAX_LINE_BYTES``),
        if it did."""
        self.tools_changed = anyio.Event()
        """Set when the server sends ``notifications/tools/list_changed``."""
        self.screen = ListingScreen(name, self._negotiated_version)
        self.auth: Any = None
        """The sign-in of a URL server (:func:`~hermes_core._mcp.oauth.auth_for`), if any."""
        self.refused: RefusedCredentials | None = None
        """Notes a URL server's 401 or 403 to the credentials the user gave it."""
        self._closed = anyio.Event()
        self._next_relist = -math.inf
        self._asking: list[_CallAsking] = []
        """The calls in flight, oldest first: the server's questions go to the oldest one's
        answerer (a question does not say which call it belongs to over stdio)."""

    def _negotiated_version(self) -> str | None:
        try:
            return self.client.session.protocol_version
        except (AttributeError, RuntimeError):  # no client yet, or not connected
            return None

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

    async def wait_closed_or_changed(self) -> None:
        """Wait until the connection is gone or the server says its tools changed, and then
        until :data:`RELIST_SECONDS` have passed since the last change was told: the changes
        said meanwhile are one (a server saying it every few milliseconds is listed once a
        second, not back to back)."""
        async with anyio.create_task_group() as group:

            async def closed() -> None:
                await self.wait_closed()
                group.cancel_scope.cancel()

            async def changed() -> None:
                await self.tools_changed.wait()
                group.cancel_scope.cancel()

            group.start_soon(closed)
            group.start_soon(changed)
        with anyio.move_on_after(self._next_relist - anyio.current_time()):
            await self.wait_closed()
        self._next_relist = anyio.current_time() + RELIST_SECONDS

    async def refresh_tools(self) -> list[mcp_types.Tool]:
        """List the tools again (every page) and keep the new listing."""
        self.tools = await list_all_tools(self.client, self.name, self.screen)
        self.listing = [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in self.tools
        ]
        return self.tools

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], *, timeout: float
    ) -> mcp_types.CallToolResult:
        """Call ``tool`` (its original MCP name) with ``arguments``, waiting at most ``timeout``
        seconds. The server's progress reports go to the progress listener of the call being
        served (:mod:`hermes_core._progress`), its questions to the form answerer
        (:mod:`hermes_core._mcp.elicitation`); a question nobody could answer is declined and
        the result ends with a note saying so. Raises the SDK's ``MCPError``; a closed
        connection is also recorded."""
        listener = progress_listener()
        relay = None
        if listener is not None:

            async def relay(progress: float, total: float | None, message: str | None) -> None:
                listener(ProgressReport(progress, total, message))

        asking = _CallAsking(form_answerer())
        self._asking.append(asking)
        try:
            result = await self.client.call_tool(
                tool, arguments, read_timeout_seconds=timeout, progress_callback=relay
            )
        except MCPError as exc:
            needed = _sign_in_needed(self.auth, self.refused)
            if needed is not None:  # a step-up, or credentials revoked: the user must act
                raise McpConnectError(self.name, needed) from exc
            if exc.code == mcp_types.CONNECTION_CLOSED:
                self.mark_closed("the connection closed during a call")
            raise
        finally:
            self._asking.remove(asking)
        if asking.refusals:
            notes = [mcp_types.TextContent(type="text", text=note) for note in asking.refusals]
            result = result.model_copy(update={"content": [*result.content, *notes]})
        return result

    async def on_elicit(
        self, context: object, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        """The SDK's elicitation callback: the question goes to the answerer of the oldest call
        in flight; a URL-mode question, or one nobody can answer, is declined and noted."""
        asking = self._asking[0] if self._asking else None
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            why = "hermes does not open or pass on URL-mode requests"
            message = f"{params.message} ({params.url})"
            if asking is not None:
                asking.refusals.append(refusal_note(self.name, message, why))
            return mcp_types.ElicitResult(action="decline")
        answered = None
        if asking is not None and asking.answerer is not None:
            answered = await asking.answerer.answer(self.name, params)
        if answered is None:
            why = "no terminal, and the client of hermes serve cannot take an elicitation form"
            if asking is None:
                why = "no call of hermes was waiting for it"
            else:
                asking.refusals.append(refusal_note(self.name, params.message, why))
            log.info("declined a question of MCP server %r: %s", self.name, why)
            return mcp_types.ElicitResult(action="decline")
        return answered


@dataclass
class _CallAsking:
    """One call in flight: who answers the server's questions, and the notes of those nobody
    could answer."""

    answerer: FormAnswerer | None
    refusals: list[str] = dataclasses.field(default_factory=list)


def _sign_in_needed(auth: Any, refused: RefusedCredentials | None) -> str | None:
    """Why the connection's sign-in stopped for the user (``run: hermes mcp login``), or why
    the server refused the credentials the user gave it; once."""
    needed = getattr(auth, "sign_in_needed", None)
    if needed is None:
        return None if refused is None else refused.reason()
    auth.sign_in_needed = None
    return str(needed.reason)


def _server_ended(connection: McpConnection, transport: Any) -> None:
    """The end of the server's messages: it closed the connection, or hermes ended it."""
    connection.cut_off = getattr(transport, "cut_off", None)
    connection.mark_closed(connection.cut_off or "the server closed the connection")


_NO_MODULE = re.compile(r"No module named '?([A-Za-z0-9_.]+)'?")


def _stdio_transport(
    name: str, config: McpServerConfig, env: Environment, log: ServerLog
) -> StdioTransport | Any:
    assert config.command is not None
    cwd = server_cwd(config, env)
    if not cwd.is_dir():
        raise McpConnectError(name, f"the working directory {str(cwd)!r} does not exist")
    if (refusal := launch_refusal(config, env)) is not None:
        raise McpConnectError(name, refusal, refused=True)
    if sys.platform == "win32":  # no process groups: the SDK's Job Object ends the tree
        params = StdioServerParameters(
            command=config.command,
            args=launch_args(config, env),
            env=child_environment(config, env),
            cwd=cwd,
        )
        return stdio_client(params)
    return StdioTransport(
        config.command,
        launch_args(config, env),
        environment=child_environment(config, env),
        cwd=cwd,
        log=log,
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
    if log is None or failure.refused:  # refused: nothing ran, nothing to add
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
    found = find_command(config.command, child_environment(config, env).get("PATH"))
    if is_python(config.command):
        cwd = server_cwd(config, env)
        return missing_module_note(config.command, config.args, cwd, env, module, found)
    return f"{config.command} ({found}) has no module named {module!r}"


@asynccontextmanager
async def open_connection(
    name: str,
    config: McpServerConfig,
    env: Environment,
    sign_in: SignIn | None = None,
) -> AsyncIterator[McpConnection]:
    """Connect to server ``name`` and list its tools within ``config.connect_timeout``.

    A URL server that needs sign-in uses the tokens ``hermes mcp login`` stored (refreshed
    when expired); ``sign_in`` is that command's browser sign-in, and without it a server
    that needs the user fails the connection saying ``run: hermes mcp login NAME``
    (:mod:`hermes_core._mcp.oauth`).

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
    auth: Any = None
    refused = RefusedCredentials(name, config, env)
    connected = False
    failure: McpConnectError | None = None
    scope = anyio.CancelScope(deadline=anyio.current_time() + config.connect_timeout)
    with scope:
        try:
            async with AsyncExitStack() as stack:
                if expanded.url is not None:
                    auth = auth_for(name, expanded, env, sign_in)
                    client = create_mcp_http_client(headers=dict(expanded.headers), auth=auth)
                    http = await stack.enter_async_context(
                        bound_json_answers(refused.watch(client, auth))
                    )
                    inner: Any = streamable_http_client(expanded.url, http_client=http)
                else:
                    assert log is not None
                    inner = transport = _stdio_transport(name, expanded, env, log)
                connection = McpConnection(name, expanded, log)
                connection.auth, connection.refused = auth, refused

                async def on_message(message: object) -> None:
                    if isinstance(message, mcp_types.ToolListChangedNotification):
                        connection.tools_changed.set()

                # Declared only where someone may answer (a terminal, or serve's clients).
                answers_forms = form_answerer() is not None
                connection.client = Client(
                    WatchedTransport(
                        inner,
                        partial(_server_ended, connection, transport),
                        connection.screen,
                        form_only=answers_forms,
                    ),
                    cache=None,
                    client_info=CLIENT_INFO,
                    message_handler=on_message,
                    elicitation_callback=connection.on_elicit if answers_forms else None,
                )
                try:
                    await stack.enter_async_context(connection.client)
                    await connection.refresh_tools()
                except McpConnectError:
                    raise
                except Exception as exc:
                    needed = _sign_in_needed(auth, refused)
                    if needed is not None:
                        raise McpConnectError(name, needed) from exc
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
            inner_failure = innermost(exc)
            needed = _sign_in_needed(auth, refused)
            if isinstance(inner_failure, McpConnectError):  # raised above, then grouped
                failure = inner_failure
            elif needed is not None:
                failure = McpConnectError(name, needed)
            else:
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
