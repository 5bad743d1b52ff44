"""One connection of a supervised server, from its opening to its end: served while it lives
(listed again on ``tools/list_changed``), and how it ended. The server's state is not written
here: :class:`~hermes_core._mcp.supervised.SupervisedServer` is told through ``opened`` and
``listed``, its transitions, and reads the :class:`Ended`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from hermes_core._config import McpServerConfig
    from hermes_core._mcp.connection import McpConnection
    from hermes_core._paths import Environment

__all__ = ["Ended", "connect_and_serve"]


@dataclass(frozen=True)
class Ended:
    """How one connection attempt ended: why, whether it opened, how long it was up, and the
    server's last lines of standard error (``None``: nothing new to say of them)."""

    reason: str
    opened: bool
    uptime: float | None
    stderr_tail: tuple[str, ...] | None = None


async def connect_and_serve(
    name: str,
    config: McpServerConfig,
    env: Environment,
    *,
    opened: Callable[[McpConnection], None],
    listed: Callable[[McpConnection], None],
) -> Ended:
    """Connect to server ``name`` and serve the connection until it ends: ``opened`` once it
    is open (its first listing came), ``listed`` after each listing of changed tools."""
    from hermes_core._mcp.connection import open_connection
    from hermes_core._mcp.failures import McpConnectError, describe_failure

    opening: McpConnection | None = None
    up_since: float | None = None
    stderr_tail: tuple[str, ...] | None = None
    try:
        async with open_connection(name, config, env) as connection:
            opening = connection
            up_since = anyio.current_time()
            opened(connection)
            reason = await _serve(connection, config.timeout, listed)
    except McpConnectError as exc:
        reason = exc.reason
        stderr_tail = exc.stderr_tail
    except Exception as exc:
        reason = f"the connection failed: {describe_failure(exc)}"
    if opening is not None and opening.log is not None:
        stderr_tail = opening.log.tail
    uptime = None if up_since is None else anyio.current_time() - up_since
    return Ended(reason, opening is not None, uptime, stderr_tail)


async def _serve(
    connection: McpConnection, timeout: float, listed: Callable[[McpConnection], None]
) -> str:
    """Wait while the connection lives, re-listing on ``tools/list_changed``; return why it
    ended."""
    while True:
        await connection.wait_closed_or_changed()
        if connection.closed:
            return connection.close_reason or "the connection closed"
        connection.tools_changed = anyio.Event()
        try:
            with anyio.fail_after(timeout):
                await connection.refresh_tools()
        except Exception as exc:
            from hermes_core._mcp.failures import describe_failure

            return f"listing the changed tools failed: {describe_failure(exc)}"
        listed(connection)
