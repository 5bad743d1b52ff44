"""Running the served host over stdio or streamable HTTP, with its lifetime around it.

Both entries start the host, check that its tool array can be assembled (an unknown search
backend fails here, before any client connects), serve until the client leaves or the process
gets SIGTERM/SIGINT, and then shut the host down, ending every MCP server child it started.

The host waits for no MCP server (:data:`SERVE_STARTUP`): servers with a tool manifest have
their tools registered at once, every server connects in the background once the first client
has the tool list (or a call needs it, or after
:data:`~hermes_core._serve.server.HELD_SERVERS_START_AFTER` seconds), and clients are told when
the tool list changes; a search waits for servers whose tools are still unknown, a call for its
own server only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import uvicorn

from hermes_core._config import Config
from hermes_core._errors import HermesError
from hermes_core._gc_pause import end_start_pause
from hermes_core._host import Host
from hermes_core._jsonrpc_lines import MAX_LINE_BYTES
from hermes_core._mcp.elicitation import NobodyAnswers, answering_forms
from hermes_core._mcp.startup import McpStartup
from hermes_core._paths import Environment
from hermes_core._serve.http_access import BearerTokenGate, transport_security
from hermes_core._serve.http_batches import HttpBatches
from hermes_core._serve.http_get import NoGetStream
from hermes_core._serve.server import HostServer, SessionScope
from hermes_core._serve.token import TokenFile, read_or_create_token

__all__ = [
    "DEFAULT_HTTP_HOST",
    "DEFAULT_HTTP_PORT",
    "MCP_PATH",
    "SERVE_STARTUP",
    "http_app",
    "http_url",
    "serve_http",
    "serve_stdio",
    "serving_host",
]

DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8765
MCP_PATH = "/mcp"
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
SERVE_STARTUP = McpStartup(wait=False, hold_background=True)
"""How ``hermes serve`` starts MCP servers: none is waited for, and the background connects
wait for the first client's tool list (see the module docstring)."""
_GRACEFUL_SHUTDOWN = 5
"""Seconds open HTTP requests get to finish once serve_http is told to stop (its calls in
flight are stopped and answered first: :meth:`HostServer.stop_calls`)."""


async def _cancel_on_signal(scope: anyio.CancelScope, received: list[int]) -> None:
    """Cancel ``scope`` at the first SIGTERM or SIGINT, noted in ``received``; the later ones
    are taken and ignored until the caller ends this, once the host is closed (a second one
    killed the process mid-shutdown, leaving what its MCP servers had started running)."""
    with anyio.open_signal_receiver(*_STOP_SIGNALS) as signals:
        async for number in signals:
            if not received:
                received.append(number)
                scope.cancel()


def _die_by(number: int) -> None:
    """End the process by signal ``number`` as if it had not been caught (status 128+n)."""
    sys.stderr.flush()
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()


async def serve_stdio(
    config: Config,
    env: Environment,
    *,
    config_path: Path | None = None,
    context_length: int | None = None,
) -> None:
    """Serve the host to one client over this process's stdin and stdout.

    The standard streams are claimed before the host starts, so anything a plugin or an MCP
    server child prints goes to stderr and the client reads nothing but protocol on stdout.
    Serving ends when the client closes stdin; on SIGTERM or SIGINT the host is shut down
    (ending its MCP server children) and the process then ends by that signal.
    """
    from hermes_core._serve.stdio_streams import stdio_streams

    # Python-level prints go to stderr directly (sys.stdout's buffer is flushed to the
    # descriptor only when full or at exit); stdio_streams diverts the descriptor for the rest.
    received: list[int] = []
    with _startup_errors_unwrapped():
        async with stdio_streams() as (read_stream, write_stream):
            with _stdout_to_stderr():
                await _serve_stdio_streams(
                    config, env, read_stream, write_stream, received, config_path, context_length
                )
            if received:
                # The host is closed and its MCP server children are ended: the process ends
                # by the signal, its stdin reader (a thread blocked until the client writes or
                # closes stdin) left behind.
                _die_by(received[0])


async def _serve_stdio_streams(
    config: Config,
    env: Environment,
    read_stream: Any,
    write_stream: Any,
    received: list[int],
    config_path: Path | None,
    context_length: int | None,
) -> None:
    # The signal watcher encloses the host, so a signal while MCP servers are still connecting
    # cancels the start, which ends the servers begun so far.
    async with anyio.create_task_group() as watching:
        outer = anyio.CancelScope()
        watching.start_soon(_cancel_on_signal, outer, received)
        with outer:
            async with serving_host(
                config,
                env,
                session_scope="connection",
                config_path=config_path,
                context_length=context_length,
            ) as served:
                await served.server.run(read_stream, write_stream, served.initialization_options())
        watching.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def serving_host(
    config: Config,
    env: Environment,
    *,
    session_scope: SessionScope,
    config_path: Path | None = None,
    context_length: int | None = None,
) -> AsyncIterator[HostServer]:
    """The started host as a :class:`HostServer`, ready to be run over any transport: what
    :func:`serve_stdio` and :func:`serve_http` serve (and what tests serve in process).

    The tool array is assembled once before this yields, so an unknown policy or search
    backend fails here, naming the valid ones. While the block runs, the parked calls of
    2026-era clients are hosted, list changes are announced, and the MCP servers held back at
    start are started (:meth:`HostServer.start_held_servers`); an upstream server's question
    outside a request is answered by nobody. Leaving the block shuts the host down.
    """
    # Upstream servers' questions go to the client of the request being served (see
    # HostServer); outside a request nobody answers them.
    with answering_forms(NobodyAnswers()):
        async with Host(
            config, env, config_path=config_path, mcp_reconnect=True, mcp_startup=SERVE_STARTUP
        ) as host:
            served = HostServer(host, context_length=context_length, session_scope=session_scope)
            host.prepare_tools()
            served.tools()
            end_start_pause()  # when `hermes serve` began one (see pause_for_start)
            async with anyio.create_task_group() as group:
                await group.start(served.parked.run)
                group.start_soon(served.watch_tool_list)
                group.start_soon(served.start_held_servers)
                try:
                    yield served
                finally:
                    await served.end_connection_session()
                group.cancel_scope.cancel()


@contextlib.contextmanager
def _startup_errors_unwrapped() -> Iterator[None]:
    """Task groups wrap a startup error (a bad configuration) in an exception group; raise the
    one :class:`HermesError` itself so the command reports it plainly (exit status 2)."""
    try:
        yield
    except BaseExceptionGroup as group:
        single = _only_hermes_error(group)
        if single is None:
            raise
        raise single from None


def _only_hermes_error(group: BaseExceptionGroup[BaseException]) -> HermesError | None:
    """The one :class:`HermesError` a (nested) exception group holds, if that is all it holds."""
    errors: tuple[BaseException, ...] = group.exceptions
    while len(errors) == 1 and isinstance(errors[0], BaseExceptionGroup):
        errors = errors[0].exceptions
    if len(errors) == 1 and isinstance(errors[0], HermesError):
        return errors[0]
    return None


def http_url(host: str, port: int) -> str:
    """The URL clients use to reach ``serve_http`` on ``host``:``port``."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        made = socket.create_server((host, port), family=family)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise HermesError(f"hermes serve cannot listen on {host}:{port}: {reason}") from None
    # create_server's socket says protocol 0, and asyncio turns Nagle's algorithm off
    # (TCP_NODELAY) only on the connections of a socket that says IPPROTO_TCP: without it the
    # last small write of each answer waited for the client's delayed ACK, ~40 ms a request.
    sock = socket.socket(made.family, made.type, socket.IPPROTO_TCP, fileno=made.detach())
    sock.set_inheritable(False)
    return sock


async def serve_http(
    config: Config,
    env: Environment,
    *,
    host: str = DEFAULT_HTTP_HOST,
    port: int = DEFAULT_HTTP_PORT,
    config_path: Path | None = None,
    context_length: int | None = None,
    on_listening: Callable[[str], None] | None = None,
    require_token: bool = True,
    allow_hosts: Sequence[str] = (),
) -> None:
    """Serve the host over stateless streamable HTTP at ``http://host:port/mcp``.

    Stateless: every request runs in a fresh hermes session, so instances can sit behind an
    ordinary load balancer. 2026-era clients get list changes on ``subscriptions/listen``
    streams; 2025-era clients have no stream for them on a stateless server and re-list.
    ``port`` 0 picks a free port; ``on_listening`` receives the URL once requests are served.

    With ``require_token`` (the default) every request must carry ``Authorization: Bearer``
    with the token of ``env.serve_token_path`` (made at first use; a token file other accounts
    can read is an error). Requests must name this bind in ``Host`` (or one of
    ``allow_hosts``), and a browser's ``Origin`` must be the same (see
    :mod:`hermes_core._serve.http_access`).
    """
    token: TokenFile | None = None
    if require_token:
        read_or_create_token(env.serve_token_path)
        token = TokenFile(env.serve_token_path)
    sock = _listen(host, port)
    with sock, _startup_errors_unwrapped():
        await _serve_http_on(
            sock,
            config,
            env,
            host,
            token,
            tuple(allow_hosts),
            config_path,
            context_length,
            on_listening,
        )


async def _serve_http_on(
    sock: socket.socket,
    config: Config,
    env: Environment,
    host: str,
    token: TokenFile | None,
    allow_hosts: tuple[str, ...],
    config_path: Path | None,
    context_length: int | None,
    on_listening: Callable[[str], None] | None,
) -> None:
    # One signal watcher encloses the host: before requests are served a signal cancels the
    # start (ending the MCP servers begun so far); afterwards it stops uvicorn gracefully. It
    # takes the later signals too, ignored, until the host is closed: a second one killed the
    # process mid-shutdown (its calls unanswered, what its MCP servers started left running).
    stop: list[Callable[[], None]] = []
    bound_port: int = sock.getsockname()[1]
    async with anyio.create_task_group() as watching:
        outer = anyio.CancelScope()

        async def stop_on_signal() -> None:
            stopping = False
            with anyio.open_signal_receiver(*_STOP_SIGNALS) as signals:
                async for _ in signals:
                    if stopping:
                        continue
                    stopping = True
                    if stop:
                        stop[0]()
                    else:
                        outer.cancel()

        watching.start_soon(stop_on_signal)
        with outer:
            async with serving_host(
                config,
                env,
                session_scope="request",
                config_path=config_path,
                context_length=context_length,
            ) as served:
                app = http_app(served, host, bound_port, allow_hosts=allow_hosts, token=token)
                server = _UvicornServer(
                    uvicorn.Config(
                        app,
                        log_config=None,
                        access_log=False,
                        lifespan="on",
                        timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN,
                    )
                )
                url = http_url(host, bound_port)

                def stop_serving() -> None:
                    # Calls in flight are stopped and answered: uvicorn's graceful shutdown would
                    # wait for them (_GRACEFUL_SHUTDOWN), then drop their connections unanswered.
                    served.stop_calls()
                    served.end_listen_streams()
                    server.should_exit = True

                stop.append(stop_serving)

                async def report_listening() -> None:
                    while not server.started:
                        await anyio.sleep(0.02)
                    if on_listening is not None:
                        on_listening(url)

                async with anyio.create_task_group() as group:
                    group.start_soon(report_listening)
                    await server.serve(sockets=[sock])
                    group.cancel_scope.cancel()
        watching.cancel_scope.cancel()


def http_app(
    served: HostServer,
    host: str,
    port: int,
    *,
    allow_hosts: Sequence[str] = (),
    token: TokenFile | None = None,
) -> Any:
    """The ASGI app of stateless streamable HTTP at :data:`MCP_PATH` for ``served`` bound to
    ``host``:``port``: the Host/Origin check for that bind (and ``allow_hosts``), behind the
    bearer token gate when ``token`` is given (see :mod:`hermes_core._serve.http_access`); a
    GET is answered 405 (:mod:`hermes_core._serve.http_get`), a POSTed batch is read
    (:mod:`hermes_core._serve.http_batches`)."""
    security = transport_security(host, port, tuple(allow_hosts))
    app: Any = served.server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        host=host,
        transport_security=security,
        # The longest message hermes reads anywhere; the SDK's 4 MiB default refused over HTTP
        # a call (a 5 MB write_file) that runs over stdio.
        max_request_body_size=MAX_LINE_BYTES,
    )
    app = HttpBatches(app, MCP_PATH, security, MAX_LINE_BYTES)
    app = NoGetStream(app, MCP_PATH, security)
    if token is not None:
        app = BearerTokenGate(app, token)
    return app


class _UvicornServer(uvicorn.Server):
    """uvicorn without its own signal handling: ``serve_http`` stops it, then shuts the host
    down; uvicorn's handlers would re-raise SIGTERM after serving and kill the process before
    the MCP server children are ended."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
