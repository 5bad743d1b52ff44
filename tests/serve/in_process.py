"""``hermes serve`` in this process: the host built from a :class:`ServeHome`'s config file and
environment as the command builds it, served by :func:`~hermes_core._serve.serving_host` (what
``serve_stdio`` and ``serve_http`` run) to an ``mcp`` SDK client over memory streams, or over
stateless streamable HTTP on 127.0.0.1 from an in-process uvicorn.

Over memory streams the server runs as it runs over stdio (one hermes session per connection,
requests to the client on the connection, both protocol eras); nothing about the process is
checked here (see ``test_serve_process.py``, ``test_serve_stdout.py``)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.shared.memory import create_client_server_memory_streams
from serving import ServeHome, http_client

from hermes_core._config import load_config
from hermes_core._paths import Environment
from hermes_core._serve import HostServer, SessionScope, http_url
from hermes_core._serve.token import TokenFile, read_or_create_token
from hermes_core._serve.transports import http_app, serving_host
from hermes_core.testing import forget_modules_under

SERVER_SHUTDOWN_GRACE = 5.0
"""Seconds the server gets to end once the client closed its side (a guard, not a check)."""


def environment(served: ServeHome) -> Environment:
    """What ``hermes --config <config.yaml> serve`` takes from its process in ``served``."""
    return Environment(
        home=served.home,
        cwd=served.work,
        variables=served.variables(),
        config_file=served.config_path,
        user_home=served.cli.user_home,
    )


@asynccontextmanager
async def host_server(
    served: ServeHome, *, session_scope: SessionScope = "connection"
) -> AsyncIterator[HostServer]:
    """The served host of ``served``'s config file, started as ``hermes serve`` starts it;
    shut down (its MCP server children ended) when the block ends. Plugin modules imported
    from ``served`` are forgotten afterwards, so the next test imports its own."""
    env = environment(served)
    try:
        async with serving_host(
            load_config(env.config_path),
            env,
            session_scope=session_scope,
            config_path=env.config_path,
        ) as server:
            yield server
    finally:
        forget_modules_under(served.root)


@asynccontextmanager
async def memory_streams(server: HostServer) -> AsyncIterator[TransportStreams]:
    """A client transport to ``server`` run over memory streams as ``serve_stdio`` runs it
    over stdin and stdout (with the same initialization options)."""
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        done = anyio.Event()

        async def run() -> None:
            try:
                await server.server.run(*server_streams, server.initialization_options())
            finally:
                done.set()

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            try:
                yield client_streams
            finally:
                # End of input, as when a stdio client closes stdin.
                await client_streams[1].aclose()
                await server_streams[1].aclose()
                with anyio.move_on_after(SERVER_SHUTDOWN_GRACE):
                    await done.wait()
                group.cancel_scope.cancel()


@asynccontextmanager
async def in_process(served: ServeHome, **options: Any) -> AsyncIterator[Client]:
    """An ``mcp`` SDK client (``options`` go to ``Client``) of ``served``'s hermes served in
    this process over memory streams, as over stdio: one connection, one hermes session."""
    async with host_server(served) as server, Client(memory_streams(server), **options) as client:
        yield client


class InProcessHttp:
    """``served``'s hermes served over stateless streamable HTTP by uvicorn in this process, on
    a free port of 127.0.0.1, with the bearer token (``--no-auth`` with ``auth=False``)."""

    def __init__(self, server: HostServer, url: str, token: str) -> None:
        self.server = server
        self.url = url
        self.token = token

    @property
    def headers(self) -> dict[str, str]:
        """The ``Authorization`` header a client of this server sends."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def client(self, **options: Any) -> contextlib.AbstractAsyncContextManager[Client]:
        """An ``mcp`` SDK client of this server sending the token (``options`` go to
        ``Client``)."""
        return http_client(self.url, self.headers, **options)


@asynccontextmanager
async def http_in_process(served: ServeHome, *, auth: bool = True) -> AsyncIterator[InProcessHttp]:
    """``hermes serve --transport http --port 0`` run in this process (the app
    :func:`~hermes_core._serve.transports.http_app` builds, as ``serve_http`` serves it); stopped
    as on SIGTERM when the block ends."""
    env = environment(served)
    token: TokenFile | None = None
    if auth:
        read_or_create_token(env.serve_token_path)
        token = TokenFile(env.serve_token_path)
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port: int = sock.getsockname()[1]
        async with host_server(served, session_scope="request") as server:
            app = http_app(server, "127.0.0.1", port, token=token)
            uvicorn_server = _QuietUvicorn(
                uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
            )
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: uvicorn_server.serve(sockets=[sock]))
                with anyio.fail_after(60):  # a guard against a hang, not a performance check
                    while not uvicorn_server.started:
                        await anyio.sleep(0.02)
                try:
                    secret = env.serve_token_path.read_text().strip() if auth else ""
                    yield InProcessHttp(server, http_url("127.0.0.1", port), secret)
                finally:
                    server.end_listen_streams()
                    uvicorn_server.should_exit = True


class _QuietUvicorn(uvicorn.Server):
    """uvicorn without its signal handling: the test process keeps its own."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
