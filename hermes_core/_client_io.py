"""A session's own file writes and commands, carried out by its client instead of the host.

An editor connected over ACP can write files itself (the edit appears as a diff in the editor,
unsaved buffers included) and run commands in its own terminals. A session whose client offers
that holds a :class:`ClientFiles` and a :class:`ClientTerminal` (:func:`attach_client_io`);
the bundled ``read_file``, ``write_file``, ``patch`` and ``terminal`` tools ask
:func:`client_files` and :func:`client_terminal` and, when one is there, hand it the step that
touches the file or runs the command (the text to read or write, the command line) after
their own checks. Everything before that step is unchanged: the call
still goes through the one call path (hooks, approvals, the activity log), paths are still
resolved and bounded by the session's working directory, and the result has the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from hermes_core._session import Session

_FILES = "hermes.client_files"
_TERMINAL = "hermes.client_terminal"

Ending = Literal["exited", "timeout", "interrupted"]


class ClientIOError(Exception):
    """The client failed or refused a write or a command; the message says why."""


@runtime_checkable
class ClientFiles(Protocol):
    """Reads and writes a session's files through its client (an editor: its buffers, unsaved
    changes included)."""

    async def read_text(self, path: Path) -> str:
        """The text of the file at the absolute ``path`` as the client has it; raise
        :class:`ClientIOError` when the client fails."""
        ...

    async def write_text(self, path: Path, content: str) -> None:
        """Replace (or create) the file at the absolute ``path`` with ``content``; raise
        :class:`ClientIOError` when the client fails."""
        ...


@dataclass(frozen=True)
class TerminalRun:
    """What a command run by the client left: its output (cut by the client beyond the limit
    it was given), its exit code (``None`` when a signal ended it) and why it ended."""

    output: str
    exit_code: int | None
    ending: Ending
    truncated: bool = False
    signal: str | None = None


@runtime_checkable
class ClientTerminal(Protocol):
    """Runs a session's commands in its client's terminals."""

    async def run(
        self,
        argv: list[str],
        cwd: Path,
        *,
        timeout: float,
        output_limit: int,
        session: Session,
    ) -> TerminalRun:
        """Run ``argv`` in ``cwd`` until it exits, ``timeout`` seconds pass or the session is
        interrupted (then it is killed); raise :class:`ClientIOError` when the client fails."""
        ...


def attach_client_io(
    session: Session,
    *,
    files: ClientFiles | None = None,
    terminal: ClientTerminal | None = None,
) -> None:
    """Let ``session``'s client carry out its file writes and commands."""
    if files is not None:
        session.state[_FILES] = files
    if terminal is not None:
        session.state[_TERMINAL] = terminal


def client_files(session: Session) -> ClientFiles | None:
    """The client that reads and writes ``session``'s files, if it has one."""
    found = session.state.get(_FILES)
    return found if isinstance(found, ClientFiles) else None


def client_terminal(session: Session) -> ClientTerminal | None:
    """The client that runs ``session``'s commands, if it has one."""
    found = session.state.get(_TERMINAL)
    return found if isinstance(found, ClientTerminal) else None
