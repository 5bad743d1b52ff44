"""One open session with one MCP server: connect, list every page, call, close.

:func:`open_connection` is an async context manager: entering it expands ``${VAR}``, starts the
stdio child (or opens the streamable HTTP client), negotiates the protocol era and lists the
tools, all within ``connect_timeout``; leaving it closes the session and ends a stdio child with
every process it started (:mod:`hermes_core.mcp.stdio`). The connection notices at once when the
server goes away (its output stream ends, or its process exits) and says so through
:meth:`McpConnection.wait_closed`.

The SDK validates a ``tools/list`` answer as a whole: one tool that breaks the schema (no
``name``, an ``inputSchema`` that is not an object, ``required`` that is not a list) would
reject the entire answer and cost the server every tool. So each answer is screened tool by
tool before the SDK reads it (:class:`ListingScreen`): a tool that hermes
(:func:`~hermes_core.mcp.manifests.tool_problem`, the rule manifests are read with) or the
SDK's schema of the negotiated protocol version rejects is skipped with one warning line, and
the others are listed. A stdio child's standard error goes to its log file
(:mod:`hermes_core.mcp.serverlog`); a failed connect names that file and shows its last lines.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
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
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

from hermes_core.config import McpServerConfig
from hermes_core.errors import ConfigError, HermesError
from hermes_core.mcp.elicitation import (
    FormAnswerer,
    declared_form_only,
    form_answerer,
    refusal_note,
)
from hermes_core.mcp.expand import expand_server_config
from hermes_core.mcp.interpreter import find_command, is_python
from hermes_core.mcp.manifests import tool_problem
from hermes_core.mcp.oauth import SignIn, auth_for
from hermes_core.mcp.serverlog import ServerLog, server_log_path
from hermes_core.mcp.stdio import StdioTransport
from hermes_core.mcp.transport import transport_of
from hermes_core.paths import Environment
from hermes_core.progress import ProgressReport, progress_listener
from hermes_core.version import __version__

__all__ = [
    "MAX_LIST_PAGES",
    "ListingScreen",
    "McpConnectError",
    "McpConnection",
    "SkippedTool",
    "describe_failure",
    "list_all_tools",
    "open_connection",
    "screen_tools",
    "transport_of",
]

log = logging.getLogger("hermes_core.mcp")

MAX_LIST_PAGES = 1000
"""A server whose ``tools/list`` never stops paging is cut off here."""

FALLBACK_VERSION = "2025-11-25"
"""The version the SDK validates an answer under before a version is negotiated."""

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


# Screening tools/list answers ---------------------------------------------------------------


@dataclass(frozen=True)
class SkippedTool:
    """A listed tool left out: its position in its ``tools/list`` page, its name when it has
    one, and what is wrong with it (one line)."""

    index: int
    name: str | None
    problem: str

    def describe(self, offset: int = 0) -> str:
        """``'name' (tools[3])``, or ``tools[3] (no name)``; ``offset`` is the number of tools
        listed on the pages before this one."""
        where = f"tools[{self.index + offset}]"
        return f"{self.name!r} ({where})" if self.name else f"{where} (no name)"


def _detail_line(detail: Mapping[str, Any], skip: int) -> str:
    """One pydantic error detail as ``where: what``, its location without the first ``skip``
    parts."""
    where = ".".join(str(part) for part in detail["loc"][skip:])
    message = str(detail["msg"])
    message = message[:1].lower() + message[1:]
    return f"{where}: {message}" if where else message


def validation_problem(error: ValidationError) -> str:
    """A pydantic error in one line, ``where: what`` of its first error (and how many more
    there are), without pydantic's links."""
    details = error.errors(include_url=False)
    if not details:
        return error.title
    more = len(details) - 1
    first = _detail_line(details[0], 0)
    return f"{first} (and {more} more)" if more else first


def _name_of(entry: Any) -> str | None:
    name = entry.get("name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) and name else None


def _rejected_by_sdk(
    result: Mapping[str, Any], tools: Sequence[Any], version: str
) -> dict[int, str]:
    """Position -> problem of each of ``tools`` that the SDK rejects in the answer ``result``
    under ``version``: the schema of that version, then the SDK's own model, as the SDK reads
    an answer."""
    data = {**result, "tools": list(tools)}
    rejected: dict[int, str] = {}
    checks: list[Callable[[], object]] = [
        lambda: validate_server_result("tools/list", version, data),
        lambda: mcp_types.ListToolsResult.model_validate(data, by_name=False),
    ]
    for check in checks:
        try:
            check()
        except ValidationError as exc:
            for detail in exc.errors(include_url=False):
                loc = detail["loc"]
                if len(loc) >= 2 and loc[0] == "tools" and isinstance(loc[1], int):
                    rejected.setdefault(loc[1], _detail_line(detail, 2))
        except (KeyError, ValueError):  # a method or version this SDK has no schema for
            pass
    return rejected


def screen_tools(
    result: Mapping[str, Any], version: str | None
) -> tuple[list[Any], list[SkippedTool]]:
    """The tools of one ``tools/list`` answer (``result``, its ``tools`` a list) that hermes
    and the SDK can use, and the skipped ones in listing order. An error that names no tool
    (the answer itself is malformed) is left for the SDK to report."""
    tools: list[Any] = result["tools"]
    skipped: dict[int, SkippedTool] = {}
    for index, entry in enumerate(tools):
        if not isinstance(entry, dict):
            problem = f"expected a tool object, got {type(entry).__name__}"
            skipped[index] = SkippedTool(index, None, problem)
        elif (problem_of_entry := tool_problem(entry)) is not None:
            skipped[index] = SkippedTool(index, _name_of(entry), problem_of_entry)
    # The SDK names every tool it rejects at once; the rounds only make sure that what is
    # left passes, as the SDK will check it again.
    for _ in range(3):
        candidates = [index for index in range(len(tools)) if index not in skipped]
        rejected = _rejected_by_sdk(
            result, [tools[i] for i in candidates], version or FALLBACK_VERSION
        )
        if not rejected:
            break
        for position, problem in rejected.items():
            index = candidates[position]
            skipped[index] = SkippedTool(index, _name_of(tools[index]), problem)
    kept = [entry for index, entry in enumerate(tools) if index not in skipped]
    return kept, sorted(skipped.values(), key=lambda tool: tool.index)


class ListingScreen:
    """Screens the answers to ``tools/list`` on one connection.

    The connection's write stream reports each message the client sends (:meth:`sent`); its
    read stream passes each message the server sends through :meth:`received`, which answers
    a ``tools/list`` without the tools hermes or the SDK cannot use. ``version`` gives the
    negotiated protocol version of the connection to ``server``. The skipped tools are kept
    until :meth:`take_skipped`.
    """

    def __init__(self, server: str, version: Callable[[], str | None]) -> None:
        self._server = server
        self._version = version
        self._pending: set[str | int] = set()
        self._skipped: list[SkippedTool] = []

    def sent(self, item: SessionMessage) -> None:
        """Note the id of a ``tools/list`` request."""
        message = item.message
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == "tools/list":
            self._pending.add(message.id)

    def received(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        """``item``, or the answer to a ``tools/list`` without the tools that are skipped."""
        if not self._pending or isinstance(item, Exception):
            return item
        message = item.message
        if not isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
            return item
        if message.id is None or message.id not in self._pending:
            return item
        self._pending.discard(message.id)
        if not isinstance(message, mcp_types.JSONRPCResponse):
            return item
        if not isinstance(message.result.get("tools"), list):
            return item
        try:
            kept, skipped = screen_tools(message.result, self._version())
        except Exception:  # the SDK reads the answer as it came, and reports what it finds
            log.exception(
                "screening the tools/list answer of MCP server %r failed; passed on as it is",
                self._server,
            )
            return item
        if not skipped:
            return item
        self._skipped.extend(skipped)
        answer = message.model_copy(update={"result": {**message.result, "tools": kept}})
        return dataclasses.replace(item, message=answer)

    def take_skipped(self) -> list[SkippedTool]:
        """The tools skipped since the last call, in the order they were listed."""
        taken, self._skipped = self._skipped, []
        return taken


class _WrappedStream:
    """Closing, and ``async with``, of a stream that wraps the transport's ``_inner`` one."""

    _inner: Any

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _WatchedReadStream(_WrappedStream):
    """The transport's read stream, reporting its end (the server went away) to a callback and
    passing each message through the listing screen.

    It delegates every call, so the SDK sees the stream it built; the end of the stream is how
    a dead server is noticed without waiting for the next call, and the screen takes the tools
    the SDK would reject out of a ``tools/list`` answer before the SDK validates it.
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        on_end: Callable[[], None],
        screen: ListingScreen,
    ) -> None:
        self._inner = inner
        self._on_end = on_end
        self._screen = screen

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, when the inner stream carries one."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        return self._screen.received(item)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _WatchedWriteStream(_WrappedStream):
    """The transport's write stream, showing each message the client sends to the listing
    screen (which notes the ``tools/list`` requests)."""

    def __init__(
        self, inner: WriteStream[SessionMessage], screen: ListingScreen, form_only: bool
    ) -> None:
        self._inner = inner
        self._screen = screen
        self._form_only = form_only

    async def send(self, item: SessionMessage, /) -> None:
        self._screen.sent(item)
        message = item.message
        if self._form_only and isinstance(message, mcp_types.JSONRPCRequest):
            narrowed = declared_form_only(message.method, message.params)
            if narrowed is not None:
                answer = message.model_copy(update={"params": narrowed})
                item = dataclasses.replace(item, message=answer)
        await self._inner.send(item)


class _WatchedTransport:
    """A transport whose read stream reports its end through ``on_end``, whose
    ``tools/list`` answers go through ``screen``, and which declares the elicitation capability
    as form mode only when ``form_only`` (see :func:`declared_form_only`)."""

    def __init__(
        self,
        inner: Any,
        on_end: Callable[[], None],
        screen: ListingScreen,
        *,
        form_only: bool = False,
    ) -> None:
        self._inner = inner
        self._on_end = on_end
        self._screen = screen
        self._form_only = form_only

    async def __aenter__(self) -> TransportStreams:
        read_stream, write_stream = await self._inner.__aenter__()
        watched: ReadStream[SessionMessage | Exception] = _WatchedReadStream(
            read_stream, self._on_end, self._screen
        )
        writer: WriteStream[SessionMessage] = _WatchedWriteStream(
            write_stream, self._screen, self._form_only
        )
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
        self.tools_changed = anyio.Event()
        """Set when the server sends ``notifications/tools/list_changed``."""
        self.screen = ListingScreen(name, self._negotiated_version)
        self.auth: Any = None
        """The sign-in of a URL server (:func:`~hermes_core.mcp.oauth.auth_for`), if any."""
        self._closed = anyio.Event()
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
        served (:mod:`hermes_core.progress`), its questions to the form answerer
        (:mod:`hermes_core.mcp.elicitation`); a question nobody could answer is declined and
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
            needed = _sign_in_needed(self.auth)
            if needed is not None:  # a step-up to more scopes, which needs the user
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


def _sign_in_needed(auth: Any) -> str | None:
    """Why the connection's sign-in stopped for the user, once (``run: hermes mcp login``)."""
    needed = getattr(auth, "sign_in_needed", None)
    if needed is None:
        return None
    auth.sign_in_needed = None
    return str(needed.reason)


async def list_all_tools(
    client: Client, server: str, screen: ListingScreen | None = None
) -> list[mcp_types.Tool]:
    """Every tool of the server, following ``nextCursor`` through all pages. The tools
    ``screen`` took out of an answer are warned about, one line each."""
    tools: list[mcp_types.Tool] = []
    listed = 0  # tools on the pages so far, skipped ones included
    seen_cursors: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        skipped = screen.take_skipped() if screen is not None else []
        for tool in skipped:
            log.warning(
                "MCP server %r lists a tool hermes cannot use, skipped: %s: %s",
                server,
                tool.describe(listed),
                tool.problem,
            )
        tools.extend(page.tools)
        listed += len(page.tools) + len(skipped)
        cursor = page.next_cursor
        if cursor is None:
            return tools
        if cursor in seen_cursors:
            raise McpConnectError(server, f"tools/list repeated the cursor {cursor!r}")
        seen_cursors.add(cursor)
    raise McpConnectError(server, f"tools/list did not end after {MAX_LIST_PAGES} pages")


def _innermost(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_failure(exc: BaseException) -> str:
    """Why a connection failed or ended, in one line (for statuses, table cells and error
    results); looks inside exception groups."""
    exc = _innermost(exc)
    if isinstance(exc, McpConnectError):
        return exc.reason
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {_one_line(exc.message)}"
    if isinstance(exc, ValidationError):
        return f"the server's {exc.title} breaks the MCP schema: {validation_problem(exc)}"
    text = _one_line(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


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
    sign_in: SignIn | None = None,
) -> AsyncIterator[McpConnection]:
    """Connect to server ``name`` and list its tools within ``config.connect_timeout``.

    A URL server that needs sign-in uses the tokens ``hermes mcp login`` stored (refreshed
    when expired); ``sign_in`` is that command's browser sign-in, and without it a server
    that needs the user fails the connection saying ``run: hermes mcp login NAME``
    (:mod:`hermes_core.mcp.oauth`).

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
    connected = False
    failure: McpConnectError | None = None
    scope = anyio.CancelScope(deadline=anyio.current_time() + config.connect_timeout)
    with scope:
        try:
            async with AsyncExitStack() as stack:
                if expanded.url is not None:
                    auth = auth_for(name, expanded, env, sign_in)
                    http = await stack.enter_async_context(
                        create_mcp_http_client(headers=dict(expanded.headers), auth=auth)
                    )
                    inner: Any = streamable_http_client(expanded.url, http_client=http)
                else:
                    assert log is not None
                    inner = transport = _stdio_transport(name, expanded, env, log)
                connection = McpConnection(name, expanded, log)
                connection.auth = auth

                async def on_message(message: object) -> None:
                    if isinstance(message, mcp_types.ToolListChangedNotification):
                        connection.tools_changed.set()

                # Declared only where someone may answer (a terminal, or serve's clients).
                answers_forms = form_answerer() is not None
                connection.client = Client(
                    _WatchedTransport(
                        inner,
                        lambda: connection.mark_closed("the server closed the connection"),
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
                    needed = _sign_in_needed(auth)
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
            inner_failure = _innermost(exc)
            needed = _sign_in_needed(auth)
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
