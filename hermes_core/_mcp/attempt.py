"""One connect attempt of a supervised server: its deadlines, and an event for those who wait
for it to end."""

from __future__ import annotations

import math

import anyio

from hermes_core._mcp.startup import UNKNOWN_TOOLS_WAIT

__all__ = ["ConnectAttempt"]


class ConnectAttempt:
    """A connect attempt begun now (on the event loop) with ``connect_timeout`` seconds to
    connect; a search waits for it at most :data:`~hermes_core._mcp.startup.UNKNOWN_TOOLS_WAIT`.
    :meth:`none` is the attempt of a server nothing has started."""

    def __init__(self, connect_timeout: float | None = None) -> None:
        self.timed_out = False
        """The attempt ran past its ``connect_timeout`` and that was recorded."""
        if connect_timeout is None:
            self.connect_deadline = self.search_deadline = math.inf
            self._ended: anyio.Event | None = None
            return
        now = anyio.current_time()
        self.connect_deadline = now + connect_timeout
        self.search_deadline = min(self.connect_deadline, now + UNKNOWN_TOOLS_WAIT)
        self._ended = anyio.Event()

    @classmethod
    def none(cls) -> ConnectAttempt:
        """No attempt: nothing to wait for, no deadline."""
        return cls()

    def end(self) -> None:
        """The attempt ended, connected or not: its waiters go on."""
        if self._ended is not None:
            self._ended.set()

    def past_deadline(self) -> bool:
        """Whether the ``connect_timeout`` has passed."""
        return anyio.current_time() >= self.connect_deadline

    async def wait(self, *, search: bool = False) -> None:
        """Wait for the attempt to end, at most until its deadline (for a ``search``, its
        search deadline)."""
        if self._ended is None:
            return
        deadline = self.search_deadline if search else self.connect_deadline
        with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
            await self._ended.wait()
