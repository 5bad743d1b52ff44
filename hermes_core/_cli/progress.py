"""Progress on a terminal: MCP servers connecting (one line a server while a command waits
for them), and the progress of the tool call being made (:class:`CallProgressLine`).

Only the servers a command waits for are shown (those without a tool manifest; see
docs/mcp.md, "Tool manifests"), with a spinner in rich's status style while each connects and
its outcome once it settled; the lines go away when the command goes on. Nothing is shown when
stdout or stderr is not a terminal, and rich is imported only when something is shown.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_types import ElicitRequestFormParams, ElicitResult
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.live import Live

    from hermes_core._approvals.prompt import Answer, ApprovalRequest
    from hermes_core._mcp.supervisor import ServerStatus
    from hermes_core._progress import ProgressReport

__all__ = [
    "CallProgressLine",
    "ConnectProgress",
    "QuietWhileAsking",
    "call_progress_line",
    "connect_progress",
]

_LINE_INTERVAL = 0.1
"""Seconds between two redraws of the progress line."""


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
                from hermes_core._shown import printable

                # A server's own error message: shown, never obeyed (drawn on a terminal only).
                reason = f": {printable(status.reason)}" if status.reason else ""
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


class CallProgressLine:
    """The progress listener of ``hermes tools call`` on a terminal: one line on ``stream``
    (stderr), rewritten in place (``progress/total``, a bar when the total is known, the
    message), at most every 0.1 s; :meth:`close` takes it off before the result is printed.
    Called from any thread (a handler's worker thread reports too)."""

    def __init__(self, stream: IO[str], width: int = 80) -> None:
        self._stream = stream
        self._width = max(20, width - 1)
        self._lock = threading.Lock()
        self._drawn_at = 0.0
        self._shown = False
        self._questions = 0

    def __call__(self, report: ProgressReport) -> None:
        now = time.monotonic()
        with self._lock:
            finished = report.total is not None and report.progress >= report.total
            if self._questions or (now - self._drawn_at < _LINE_INTERVAL and not finished):
                return
            self._drawn_at = now
            self._draw(progress_text(report, self._width))

    def _draw(self, text: str) -> None:
        try:
            self._stream.write(f"\r\x1b[K{text}")
            self._stream.flush()
            self._shown = True
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        """Erase the line."""
        with self._lock:
            self._erase()

    def _erase(self) -> None:
        if self._shown:
            self._shown = False
            try:
                self._stream.write("\r\x1b[K")
                self._stream.flush()
            except (OSError, ValueError):
                pass

    @contextmanager
    def asking(self) -> Iterator[None]:
        """While a question waits on the terminal (an approval, an upstream form): the line is
        taken off and not drawn again until the block ends."""
        with self._lock:
            self._questions += 1
            self._erase()
        try:
            yield
        finally:
            with self._lock:
                self._questions -= 1


class QuietWhileAsking:
    """An approval prompt (``ask``) or an upstream forms' answerer (``answer``) that keeps
    ``line`` off the terminal while it asks: progress reported every second (a script's, a
    server's) would otherwise be drawn over the question."""

    def __init__(self, asker: Any, line: CallProgressLine | None) -> None:
        self.asker = asker
        self.line = line

    @property
    def interactive(self) -> bool:
        """Whether the prompt has a person to ask."""
        return bool(getattr(self.asker, "interactive", False))

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """The prompt's answer, asked with the line off."""
        with self.line.asking() if self.line is not None else nullcontext():
            answer: Answer | None = await self.asker.ask(request, timeout)
            return answer

    async def answer(self, server: str, form: ElicitRequestFormParams) -> ElicitResult | None:
        """The form's answer, asked with the line off."""
        with self.line.asking() if self.line is not None else nullcontext():
            result: ElicitResult | None = await self.asker.answer(server, form)
            return result


def progress_text(report: ProgressReport, width: int = 80) -> str:
    """One progress report as one line of at most ``width`` characters, non-printable
    characters escaped (a server's message must not move the cursor)."""
    from hermes_core._shown import printable

    if report.total:
        share = max(0.0, min(1.0, report.progress / report.total))
        filled = round(share * 20)
        head = f"[{'#' * filled}{'.' * (20 - filled)}] {report.progress:g}/{report.total:g}"
    else:
        head = f"{report.progress:g}"
    message = printable(report.message or "")
    if not report.total and message.split(" ", 1)[0] == head:
        head = ""  # the message starts with the progress itself ("1 s of at most 300 s")
    text = f"{head} {message}".strip()
    return text if len(text) <= width else f"{text[: width - 3]}..."


def call_progress_line(stream: Any = None) -> CallProgressLine | None:
    """A :class:`CallProgressLine` on stderr when it is a terminal, else ``None``: progress is
    not written into a pipe or a log file, where a script reads stderr for errors."""
    import shutil

    err = sys.stderr if stream is None else stream
    if not _is_terminal(err):
        return None
    return CallProgressLine(err, shutil.get_terminal_size().columns)
