"""Where a stdio MCP server's standard error goes: ``<log dir>/mcp-<server>.log``.

Servers print banners, log tables and package-manager notices on stderr; on a terminal that is
noise, and under ``hermes serve`` it would mix with hermes' own messages. So each server gets
one log file, appended to on every start (a ``--- started`` line separates the runs) and bounded:
past :data:`MAX_LOG_BYTES` it is moved to ``mcp-<server>.log.1`` (replacing the older one) and
a new file is begun. The last lines of the current run are also kept in memory, for the error
that says why a server could not be connected. The directory is private to the user (0700) and
the file too (0600): a server may print a secret it was given.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import deque
from pathlib import Path
from typing import Final

from hermes_core._paths import Environment
from hermes_core._private_files import make_private_dir

__all__ = ["MAX_LOG_BYTES", "TAIL_LINES", "ServerLog", "server_log_path"]

log = logging.getLogger("hermes_core._mcp")

MAX_LOG_BYTES: Final = 1 << 20
"""A log file is rotated once it holds this many bytes (so one server keeps at most twice it)."""
TAIL_LINES: Final = 5
"""How many of the last lines of a run an error shows."""
_MAX_LINE_CHARS: Final = 300
_MAX_PENDING_BYTES: Final = 8192
"""A line longer than this (no newline yet) is cut for the tail; the file gets all of it."""


def server_log_path(env: Environment, server: str) -> Path:
    """The log file of server ``server``: ``<log dir>/mcp-<server>.log``."""
    return env.log_dir / f"mcp-{server}.log"


class ServerLog:
    """The standard error of one run of a stdio server: appended to its log file, the last
    lines kept for errors. A log file that cannot be written is reported once (a warning) and
    the output is only kept in memory; it never stops the server."""

    def __init__(self, path: Path, *, max_bytes: int = MAX_LOG_BYTES) -> None:
        self.path = path
        self._max_bytes = max_bytes
        self._fd: int | None = None
        self._size = 0
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._pending = b""
        self._failed = False

    def start(self, description: str) -> None:
        """Open the file for a new run and write the ``--- started`` line."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        self._open()
        self._append(f"--- {stamp} hermes started {description}\n".encode())

    def note(self, text: str) -> None:
        """A line from hermes itself about this run (not the server's output)."""
        self._append(f"--- hermes: {text}\n".encode(errors="replace"))

    def write(self, data: bytes) -> None:
        """Append what the server wrote to its standard error."""
        self._append(data)
        self._remember(data)

    def close(self) -> None:
        """Close the file; keep the tail."""
        if self._pending:
            self._keep_line(self._pending)
            self._pending = b""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    @property
    def tail(self) -> tuple[str, ...]:
        """The last lines (at most :data:`TAIL_LINES`) the server wrote in this run."""
        lines = list(self._tail)
        if self._pending:
            lines = [*lines, _line_text(self._pending)][-TAIL_LINES:]
        return tuple(lines)

    # Internals -------------------------------------------------------------------------------

    def _open(self) -> None:
        try:
            make_private_dir(self.path.parent)
            if self.path.exists() and self.path.stat().st_size >= self._max_bytes:
                self._rotate()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._size = os.fstat(self._fd).st_size
        except OSError as exc:
            self._fail(exc)

    def _rotate(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        os.replace(self.path, self.path.with_name(self.path.name + ".1"))

    def _append(self, data: bytes) -> None:
        if self._fd is None:
            return
        try:
            if self._size + len(data) > self._max_bytes and self._size > 0:
                self._rotate()
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                self._size = 0
            os.write(self._fd, data)
            self._size += len(data)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if not self._failed:
            self._failed = True
            log.warning(
                "cannot write the MCP server log %s (%s); the server's standard error is not kept",
                self.path,
                exc.strerror or exc,
            )

    def _remember(self, data: bytes) -> None:
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()[-_MAX_PENDING_BYTES:]
        for line in lines:
            self._keep_line(line)

    def _keep_line(self, line: bytes) -> None:
        text = _line_text(line)
        if text:
            self._tail.append(text)


def _line_text(line: bytes) -> str:
    text = line.decode("utf-8", errors="replace").rstrip()
    return text if len(text) <= _MAX_LINE_CHARS else text[: _MAX_LINE_CHARS - 3] + "..."
