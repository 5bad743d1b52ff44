"""The host and the agent of ``hermes acp``, owned by one task.

The host's MCP supervisor holds a task group that must be entered and left by the same task,
the one that runs the host (``async with host``). Requests of the protocol each run in a task
of their own, so connecting a client's MCP server is handed to that owner task
(:meth:`AcpRuntime.add_mcp_server`, :meth:`AcpRuntime.retry_mcp_server`) instead of being
done where the request runs; the owner task carries them out one after the other.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_core._config import McpServerConfig
    from hermes_core._host import Host
    from hermes_core._mcp.status import ServerStatus
    from hermes_core.agent._agent import Agent

_Request = tuple[Callable[[], Awaitable["ServerStatus"]], "asyncio.Future[ServerStatus]"]


@dataclass
class AcpRuntime:
    """A started host, the agent over its model, and the queue of work for the owner task."""

    host: Host
    agent: Agent
    _requests: asyncio.Queue[_Request] = field(default_factory=asyncio.Queue)

    async def add_mcp_server(self, name: str, config: McpServerConfig) -> ServerStatus:
        """Connect an MCP server in the owner task; its status once connected or failed."""
        return await self._in_owner(lambda: self.host.add_mcp_server(name, config))

    async def retry_mcp_server(self, name: str) -> ServerStatus:
        """Try the MCP server ``name`` that failed once more, in the owner task (see
        :meth:`~hermes_core._mcp.supervisor.McpSupervisor.retry`); its status then."""

        async def retry() -> ServerStatus:
            supervisor = self.host.mcp
            if supervisor is None:
                raise KeyError(name)
            return await supervisor.retry(name)

        return await self._in_owner(retry)

    async def _in_owner(self, work: Callable[[], Awaitable[ServerStatus]]) -> ServerStatus:
        answer: asyncio.Future[ServerStatus] = asyncio.get_running_loop().create_future()
        await self._requests.put((work, answer))
        return await answer

    async def serve(self, done: asyncio.Event) -> None:
        """Carry out the requests, in the owner task, until ``done`` is set."""
        ended = asyncio.ensure_future(done.wait())
        try:
            while True:
                asked = asyncio.ensure_future(self._requests.get())
                await asyncio.wait({asked, ended}, return_when=asyncio.FIRST_COMPLETED)
                if not asked.done():
                    asked.cancel()
                    return
                work, answer = asked.result()
                try:
                    status = await work()
                except Exception as exc:
                    if not answer.done():  # the request may have been cancelled meanwhile
                        answer.set_exception(exc)
                else:
                    if not answer.done():
                        answer.set_result(status)
        finally:
            ended.cancel()


async def own_host(
    host: Host,
    make_agent: Callable[[Host], Agent],
    ready: asyncio.Future[AcpRuntime],
    done: asyncio.Event,
    closing: Callable[[], Awaitable[None]],
) -> None:
    """Run ``host`` in this task until ``done``: start it, build the agent, hand both over
    through ``ready`` (or what stopped them), serve the runtime's requests, then call
    ``closing`` (ending the sessions) and close the agent and the host."""
    try:
        async with host:
            agent = make_agent(host)
            runtime = AcpRuntime(host, agent)
            ready.set_result(runtime)
            try:
                await runtime.serve(done)
            finally:
                with contextlib.suppress(Exception):
                    await closing()
                await agent.aclose()
    except Exception as exc:
        if ready.done():
            raise
        ready.set_exception(exc)
