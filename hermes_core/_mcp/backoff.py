"""The reconnect policy: exponential backoff that resets only after a stable run."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Backoff"]


@dataclass
class Backoff:
    """Delays between reconnect attempts: ``base`` doubling up to ``maximum``.

    The delay goes back to ``base`` only when the connection that just ended had been up for
    at least ``stable_uptime`` seconds, so a server that connects and crashes again at once
    keeps backing off.
    """

    base: float = 1.0
    maximum: float = 60.0
    stable_uptime: float = 60.0
    _next: float = field(init=False)

    def __post_init__(self) -> None:
        self._next = self.base

    def next_delay(self, uptime: float | None) -> float:
        """The delay before the next attempt, after a connection that was up ``uptime``
        seconds (``None``: the attempt failed to connect)."""
        if uptime is not None and uptime >= self.stable_uptime:
            self._next = self.base
        delay = self._next
        self._next = min(self._next * 2, self.maximum)
        return delay
