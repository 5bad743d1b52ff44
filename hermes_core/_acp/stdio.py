"""``hermes acp`` over the process's stdin and stdout, with the host's lifetime around it.

The standard streams are claimed first: the protocol gets private duplicates of descriptors
0 and 1, descriptor 1 then points at stderr and descriptor 0 at ``/dev/null``, so nothing a
plugin prints, a library logs or a child process writes (an MCP server, a command) can reach
the client: stdout carries JSON-RPC and nothing else.

Then ``initialize`` is answered at once (:mod:`~hermes_core._acp.handshake`) while a thread
imports the ACP SDK; the SDK's connection takes over the streams through
:class:`~hermes_core._acp.framing.LineTransport` (the bytes already read handed to it
first), and the configuration is read and the host started beside it. Serving ends when the
client closes stdin, or on SIGTERM or SIGINT: the sessions end, the host stops its MCP server
children, the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_core._acp.handshake import answer_initialize, read_first_line, write_message
from hermes_core._jsonrpc_lines import LineRefused, claim_stdio

if TYPE_CHECKING:
    from hermes_core._acp.runtime import AcpRuntime
    from hermes_core._config import Config
    from hermes_core._paths import Environment

_log = logging.getLogger(__name__)


def _preload() -> None:
    with contextlib.suppress(ImportError):
        importlib.import_module("acp.agent.connection")


async def open_streams(
    protocol_in: int, protocol_out: int, already_read: bytes = b""
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio streams over the two descriptors (pipes, sockets or files); ``already_read``
    comes first."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    if already_read:
        reader.feed_data(already_read)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(protocol_in, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(protocol_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def serve_acp(
    load_config: Callable[[], Config],
    env: Environment,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    initialized: dict[str, Any] | None = None,
) -> None:
    """Serve one ACP client over ``reader`` and ``writer`` until it leaves; ``initialized``
    holds the params of an ``initialize`` already answered. The configuration is read, and
    the host started, beside the connection: what stops them (a configuration error, an
    unknown model provider) is the error of ``session/new``, which an editor shows."""
    from acp.agent.connection import AgentSideConnection

    from hermes_core._acp.framing import LineTransport
    from hermes_core._acp.runtime import own_host
    from hermes_core._acp.server import AcpServer
    from hermes_core._host import Host
    from hermes_core._mcp.startup import McpStartup
    from hermes_core.agent._agent import Agent

    ready: asyncio.Future[AcpRuntime] = asyncio.get_running_loop().create_future()
    ready.add_done_callback(_log_failure)
    done = asyncio.Event()

    async def started() -> AcpRuntime:
        return await asyncio.shield(ready)

    server = AcpServer(started)
    if initialized is not None:
        server.initialized(initialized)
    # The SDK's Agent protocol lists every method, unstable ones too; the connection answers
    # "method not found" for those hermes does not define.
    agent: Any = server
    connection = AgentSideConnection(agent, LineTransport(reader, writer), listening=False)

    async def run_host() -> None:
        try:
            config = load_config()
            host = Host(
                config, env, config_path=env.config_path, mcp_startup=McpStartup(wait=False)
            )
        except Exception as exc:
            ready.set_exception(exc)
            return
        await own_host(host, Agent.from_host, ready, done, server.aclose)

    host_task = asyncio.create_task(run_host())
    try:
        await connection.listen()
    finally:
        # The client is gone: its requests still running are cancelled first, then the
        # sessions end and the host stops (its MCP server children with it).
        await connection.close()
        done.set()
        try:
            await host_task
        except Exception as exc:
            _log.error("%s", exc)


def _log_failure(ready: asyncio.Future[AcpRuntime]) -> None:
    if not ready.cancelled() and ready.exception() is not None:
        _log.error("hermes could not start: %s", ready.exception())


def run_stdio(env: Environment, load_config: Callable[[], Config]) -> None:
    """``hermes acp``: serve over this process's stdio until the client closes it."""
    protocol_in, protocol_out = claim_stdio()
    preload = threading.Thread(target=_preload, name="hermes-acp-preload", daemon=True)
    preload.start()
    line, rest = read_first_line(protocol_in)
    if not line:
        return  # the client left without a word
    if isinstance(line, LineRefused):
        write_message(protocol_out, line.answer())
        initialized, already_read = None, rest
    else:
        initialized = answer_initialize(line, protocol_out)
        already_read = rest if initialized is not None else line + rest
    preload.join()

    async def main() -> None:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            if task is not None:
                loop.add_signal_handler(number, task.cancel)
        reader, writer = await open_streams(protocol_in, protocol_out, already_read)
        with contextlib.suppress(asyncio.CancelledError):
            await serve_acp(load_config, env, reader, writer, initialized=initialized)

    asyncio.run(main())
