"""Why a connection to an MCP server failed, in one line: :class:`McpConnectError` and
:func:`describe_failure`, shared by the connection, the sign-in and the commands that show it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp import MCPError
from pydantic import ValidationError

from hermes_core._errors import HermesError

__all__ = [
    "McpConnectError",
    "describe_failure",
    "describe_output",
    "detail_line",
    "innermost",
    "validation_problem",
]


class McpConnectError(HermesError):
    """A server that could not be connected; ``reason`` says why in one line, for the status.

    For a stdio server, ``log_path`` is its log file and ``stderr_tail`` the last lines it wrote
    to its standard error in this attempt (see :meth:`output_lines`). ``refused``: the project
    gate refused to start it (``reason`` says why and what to do): no process ran.
    """

    def __init__(
        self,
        server: str,
        reason: str,
        *,
        log_path: Path | None = None,
        stderr_tail: tuple[str, ...] = (),
        refused: bool = False,
    ) -> None:
        self.server = server
        self.reason = reason
        self.log_path = log_path
        self.stderr_tail = stderr_tail
        self.refused = refused
        super().__init__(f"MCP server {server!r}: {reason}")

    def output_lines(self) -> list[str]:
        """Where the server's standard error is, and its last lines, ready to print."""
        return describe_output(self.log_path, self.stderr_tail)


def describe_output(log_path: Path | None, tail: tuple[str, ...]) -> list[str]:
    """``its standard error (last lines, PATH):`` and the lines, indented; or only where the log
    is when the server wrote nothing."""
    if log_path is None:
        return []
    if not tail:
        return [f"its standard error is logged in {log_path} (nothing written this time)"]
    return [f"its standard error (last lines, {log_path}):", *(f"  {line}" for line in tail)]


def detail_line(detail: Mapping[str, Any], skip: int) -> str:
    """One pydantic error detail as ``where: what``, its location without the first ``skip``
    parts."""
    where = ".".join(str(part) for part in detail["loc"][skip:])
    message = str(detail["msg"])
    message = message[:1].lower() + message[1:]
    return f"{where}: {message}" if where else message


def validation_problem(error: ValidationError) -> str:
    """A pydantic error in one line, ``where: what`` of its first error (and how many more
    there are), without pydantic's links."""
    details = error.errors(include_url=False)
    if not details:
        return error.title
    more = len(details) - 1
    first = detail_line(details[0], 0)
    return f"{first} (and {more} more)" if more else first


def innermost(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_failure(exc: BaseException) -> str:
    """Why a connection failed or ended, in one line (for statuses, table cells and error
    results); looks inside exception groups."""
    exc = innermost(exc)
    if isinstance(exc, McpConnectError):
        return exc.reason
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {_one_line(exc.message)}"
    if isinstance(exc, ValidationError):
        return f"the server's {exc.title} breaks the MCP schema: {validation_problem(exc)}"
    text = _one_line(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())
