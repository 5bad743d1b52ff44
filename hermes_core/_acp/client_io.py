"""The editor's file system and terminals, for the sessions of a client that offers them.

When the client's ``initialize`` advertised ``fs.readTextFile`` and ``fs.writeTextFile``, a
session's ``read_file`` reads through ``fs/read_text_file`` (unsaved changes included) and
``write_file`` and ``patch`` write through ``fs/write_text_file`` (the edit lands in the
editor's buffer, as a diff the person sees; ``patch`` edits the buffer's text, not the
disk's). When it advertised ``terminal``, ``terminal`` runs its command with
``terminal/create`` (the editor shows it as an embedded terminal in the tool call), waits with
``terminal/wait_for_exit``, reads ``terminal/output`` and releases it. The tools' own checks,
the approvals, hooks and the activity log are unchanged: this is only their last step
(:mod:`hermes_core._client_io`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from hermes_core._client_io import ClientIOError, Ending, TerminalRun

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import TerminalToolCallContent

    from hermes_core._session import Session

_POLL_SECONDS: Final = 0.05
"""How often a running command looks at the session's interrupt (as the local terminal does)."""
_REASON_CHARS: Final = 1_000
"""The most of a client's failure told to the model (an editor's error data has no bound)."""


def client_failure(exc: Exception) -> ClientIOError:
    """What the client's failure says: its message and, for a JSON-RPC error, the reason in its
    ``data`` (a string from Zed, ``{"details": ...}`` from the SDKs), which "Internal error"
    alone leaves out; cut at :data:`_REASON_CHARS`."""
    said = str(exc) or type(exc).__name__
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and set(data) == {"details"}:
        data = data["details"]
    if data not in (None, "", {}):
        reason = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        said = f"{said}: {reason}"
    return ClientIOError(said[:_REASON_CHARS])


class AcpClientFiles:
    """Reads and writes the files of one session through the client's ``fs/read_text_file``
    and ``fs/write_text_file``."""

    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self._session_id = session_id

    async def read_text(self, path: Path) -> str:
        """The text of ``path`` as the editor has it (its buffer, unsaved changes included)."""
        try:
            answer = await self._client.read_text_file(session_id=self._session_id, path=str(path))
        except Exception as exc:  # the client refused, failed or left
            raise client_failure(exc) from exc
        return answer.content

    async def write_text(self, path: Path, content: str) -> None:
        """Have the editor write ``content`` to ``path``."""
        try:
            await self._client.write_text_file(
                session_id=self._session_id, path=str(path), content=content
            )
        except Exception as exc:  # the client refused, failed or left
            raise client_failure(exc) from exc


class AcpClientTerminal:
    """Runs the commands of one session in the client's terminals; ``show`` embeds each
    terminal in the tool call the editor shows, ``showed`` is told the output it showed (the
    call's result does not show it again)."""

    def __init__(
        self,
        client: Client,
        session_id: str,
        show: Callable[[TerminalToolCallContent], Awaitable[None]],
        showed: Callable[[str], None],
    ) -> None:
        self._client = client
        self._session_id = session_id
        self._show = show
        self._showed = showed

    async def run(
        self,
        argv: list[str],
        cwd: Path,
        *,
        timeout: float,
        output_limit: int,
        session: Session,
    ) -> TerminalRun:
        """Create the terminal, wait for its exit (killing it at ``timeout`` or when the
        session is interrupted), read its output, release it."""
        from acp import tool_terminal_ref

        client, session_id = self._client, self._session_id
        try:
            created = await client.create_terminal(
                session_id=session_id,
                command=argv[0],
                args=argv[1:],
                cwd=str(cwd),
                output_byte_limit=output_limit,
            )
        except Exception as exc:
            raise client_failure(exc) from exc
        terminal_id = created.terminal_id
        try:
            await self._show(tool_terminal_ref(terminal_id))
            ending = await self._wait(terminal_id, timeout, session)
            output = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
            self._showed(output.output)
        except ClientIOError:
            raise
        except Exception as exc:
            raise client_failure(exc) from exc
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    client.release_terminal(session_id=session_id, terminal_id=terminal_id)
                )
        status = output.exit_status
        return TerminalRun(
            output.output,
            status.exit_code if status is not None else None,
            ending,
            truncated=output.truncated,
            signal=status.signal if status is not None else None,
        )

    async def _wait(self, terminal_id: str, timeout: float, session: Session) -> Ending:
        client, session_id = self._client, self._session_id
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        waiting = asyncio.ensure_future(
            client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
        )
        try:
            while not waiting.done():
                await asyncio.wait({waiting}, timeout=_POLL_SECONDS)
                if waiting.done():
                    break
                if session.interrupted or loop.time() >= deadline:
                    await client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
                    return "interrupted" if session.interrupted else "timeout"
            waiting.result()
            return "exited"
        finally:
            waiting.cancel()
