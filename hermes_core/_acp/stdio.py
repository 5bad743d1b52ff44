"""``hermes acp`` over the process's stdin and stdout, with the host's lifetime around it.

The standard streams are claimed first: the protocol gets private duplicates of descriptors
0 and 1, descriptor 1 then points at stderr and descriptor 0 at ``/dev/null``, so nothing a
plugin prints, a library logs or a child process writes (an MCP server, a command) can reach
the client: stdout carries JSON-RPC and nothing else.

The host is started once ``initialize`` has been answered (so the editor is not kept waiting
for plugins and MCP servers), and serving ends when the client closes stdin or on SIGTERM or
SIGINT: the sessions end, the host stops its MCP server children, the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core._acp.runtime import AcpRuntime, own_host
from hermes_core._acp.server import AcpServer

if TYPE_CHECKING:
    from acp.connection import StreamEvent

    from hermes_core._config import Config
    from hermes_core._paths import Environment

_log = logging.getLogger(__name__)


def claim_stdio() -> tuple[int, int]:
    """Private duplicates of stdin and stdout for the protocol; descriptor 1 then writes to
    stderr and descriptor 0 reads nothing."""
    sys.stdout.flush()
    protocol_in = os.dup(0)
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return protocol_in, protocol_out


async def open_streams(
    protocol_in: int, protocol_out: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio streams over the two descriptors (pipes, sockets or files)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(protocol_in, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(protocol_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def serve_acp(
    config: Config,
    env: Environment,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    config_path: Path | None = None,
) -> None:
    """Serve one ACP client over ``reader`` and ``writer`` until it leaves."""
    from acp.agent.connection import AgentSideConnection
    from acp.connection import StreamDirection

    from hermes_core._host import Host
    from hermes_core._mcp.startup import McpStartup
    from hermes_core.agent._loop import Agent

    answered = asyncio.Event()
    ready: asyncio.Future[AcpRuntime] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    def first_answer(event: StreamEvent) -> None:
        if event.direction is StreamDirection.OUTGOING and "id" in event.message:
            answered.set()

    async def started() -> AcpRuntime:
        answered.set()  # a client that skipped initialize
        return await asyncio.shield(ready)

    async def run_host() -> None:
        await answered.wait()
        host = Host(config, env, config_path=config_path, mcp_startup=McpStartup(wait=False))
        await own_host(host, Agent.from_host, ready, done, server.aclose)

    server = AcpServer(started)
    host_task = asyncio.create_task(run_host())
    # The SDK's Agent protocol lists every method, unstable ones too; the connection answers
    # "method not found" for those hermes does not define.
    agent: Any = server
    connection = AgentSideConnection(
        agent, writer, reader, listening=False, observers=[first_answer]
    )
    try:
        await connection.listen()
    finally:
        done.set()
        try:
            await host_task
        except Exception as exc:
            _log.error("%s", exc)
        await connection.close()


def run_stdio(config: Config, env: Environment, *, config_path: Path | None = None) -> None:
    """``hermes acp``: serve over this process's stdio until the client closes it."""
    protocol_in, protocol_out = claim_stdio()

    async def main() -> None:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            if task is not None:
                loop.add_signal_handler(number, task.cancel)
        reader, writer = await open_streams(protocol_in, protocol_out)
        with contextlib.suppress(asyncio.CancelledError):
            await serve_acp(config, env, reader, writer, config_path=config_path)

    asyncio.run(main())
