"""MCP servers connecting, on a terminal: one line a server while a command waits for them.

Only the servers a command waits for are shown (those without a tool manifest; see
docs/mcp.md, "Tool manifests"), with a spinner in rich's status style while each connects and
its outcome once it settled; the lines go away when the command goes on. Nothing is shown when
stdout or stderr is not a terminal, and rich is imported only when something is shown.
"""

from __future__ import annotations

import sys
import time
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.live import Live

    from hermes_core.mcp.supervisor import ServerStatus

__all__ = ["ConnectProgress", "connect_progress"]


class ConnectProgress:
    """The ``on_progress`` callback of a host's MCP start, drawing on ``stream`` (stderr).

    Call :meth:`close` once the host has started (and in any case before printing).
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._live: Live | None = None
        self._started = time.monotonic()
        self._statuses: list[ServerStatus] = []

    def __call__(self, statuses: list[ServerStatus]) -> None:
        self._statuses = list(statuses)
        if self._live is None:
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self._stream, highlight=False)
            self._live = Live(self, console=console, transient=True, refresh_per_second=10)
            self._live.start()
        else:
            self._live.refresh()

    def close(self) -> None:
        """Take the lines off the terminal."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.spinner import Spinner
        from rich.text import Text

        elapsed = time.monotonic() - self._started
        for status in self._statuses:
            if status.state == "connecting":
                line = Text(f"{status.name}: connecting ({elapsed:.1f} s)")
                yield Spinner("dots", text=line, style="status.spinner")
            elif status.state == "connected":
                yield Text(f"✓ {status.name}: connected, {status.tool_count} tools", "green")
            else:
                reason = f": {status.reason}" if status.reason else ""
                yield Text(f"✗ {status.name}: {status.state}{reason}", "red")


def connect_progress(stdout: Any = None, stderr: Any = None) -> ConnectProgress | None:
    """A :class:`ConnectProgress` on stderr when stdout and stderr are terminals, else
    ``None`` (nothing is drawn into a pipe or a file)."""
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    if not (_is_terminal(out) and _is_terminal(err)):
        return None
    return ConnectProgress(err)


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())
