"""A stdio MCP server as a child process that hermes ends whole, with everything it started.

The SDK's own ``stdio_client`` starts the server in a new session, but ends the process group
only when the server itself does not exit in time: a server that exits when its input closes
leaves its own children behind, re-parented to PID 1. :class:`StdioTransport` is a transport
``mcp.Client`` accepts (an async context manager yielding the read and write streams) that

- starts the server in a new session, so it and every process it starts share one process group;
- ends the group on every way out: the input is closed, the server gets a grace period to exit,
  then the whole group gets SIGTERM and, after another grace period, SIGKILL; the group is
  also ended as soon as the server process exits on its own, since a child that inherited its
  output would otherwise keep the connection looking alive;
- copies the server's standard error into its :class:`~hermes_core._mcp.serverlog.ServerLog`,
  never to hermes' own standard error.

Lines on the server's output that are not JSON-RPC are written to the log and skipped. A line
longer than :data:`~hermes_core._jsonrpc_lines.MAX_LINE_BYTES` (64 MiB) is never kept: the
server that writes one is ended, and :attr:`StdioTransport.cut_off` says why. POSIX only: on
Windows the connection uses the SDK's transport, whose Job Object ends the tree.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Final

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from hermes_core._encodable import encodable_value, model_json
from hermes_core._jsonrpc_lines import MAX_LINE_BYTES
from hermes_core._mcp.failures import validation_problem
from hermes_core._mcp.results import UNREADABLE_ANSWER
from hermes_core._mcp.serverlog import ServerLog
from hermes_core._process_groups import end_group

__all__ = ["GRACE_SECONDS", "StdioTransport"]

log = logging.getLogger("hermes_core._mcp")

GRACE_SECONDS: Final = 2.0
"""How long the server may take to exit after its input closes, and its process group after
SIGTERM, before the next step."""
_FLUSH_SECONDS: Final = 0.5
"""How long messages already accepted may take to reach the server's input at shutdown."""
_PIPES_SECONDS: Final = 0.5
"""How long the output readers may take to finish once the group is gone (a process that left
the group may still hold a pipe)."""


class StdioTransport:
    """The transport of one run of a stdio server (see the module docstring).

    ``environment`` is the child's whole environment. After the run, :attr:`exit_status` is the
    server's exit status (negative: the signal that ended it), ``None`` when it never started;
    :attr:`exited_on_its_own` is that status when the server exited before hermes stopped it;
    :attr:`cut_off` says why hermes ended the server while it ran (a line longer than
    :data:`MAX_LINE_BYTES`), ``None`` when it did not.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        *,
        environment: Mapping[str, str],
        cwd: Path,
        log: ServerLog,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.environment = dict(environment)
        self.cwd = cwd
        self.log = log
        self.pid: int | None = None
        self.exit_status: int | None = None
        self.exited_on_its_own: int | None = None
        self.cut_off: str | None = None
        self._stopping = False
        self._context: contextlib.AbstractAsyncContextManager[TransportStreams] | None = None

    async def __aenter__(self) -> TransportStreams:
        self._context = self._run()
        return await self._context.__aenter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        assert self._context is not None
        return await self._context.__aexit__(exc_type, exc_val, exc_tb)

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[TransportStreams]:
        self.log.start(f"{self.command} in {self.cwd}")
        try:
            process = await anyio.open_process(
                [self.command, *self.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.environment,
                cwd=self.cwd,
                start_new_session=True,
            )
        except BaseException as exc:
            self.log.note(f"could not start {self.command}: {exc}")
            self.log.close()
            raise
        # No await until the task group is entered: a cancellation in between would leave the
        # child running.
        self.pid = process.pid
        to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        exited = anyio.Event()
        writer_done = anyio.Event()
        readers_done = [anyio.Event(), anyio.Event()]

        async def watch_exit() -> None:
            status = await process.wait()
            exited.set()
            if not self._stopping:
                self.exited_on_its_own = status
            self.log.note(f"the server process exited with status {status}")
            await end_group(process.pid, GRACE_SECONDS)

        # The pipe tasks are shielded: a cancellation of the caller (a closing supervisor, a
        # connect_timeout) must not stop them before the shutdown below has seen the server
        # exit and read the last of its standard error. The shutdown ends them itself.
        shields: list[anyio.CancelScope] = []

        def launch(work: Callable[[], Awaitable[None]]) -> None:
            shield = anyio.CancelScope(shield=True)
            shields.append(shield)

            async def shielded() -> None:
                with shield:
                    await work()

            tasks.start_soon(shielded)

        try:
            async with anyio.create_task_group() as tasks:
                launch(watch_exit)
                launch(partial(self._read_output, process, to_session, readers_done[0]))
                launch(partial(self._copy_stderr, process, readers_done[1]))
                launch(partial(self._write_input, process, from_session, writer_done))
                try:
                    yield from_server, to_server
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._stop(
                            process, to_server, from_server, exited, writer_done, readers_done[0]
                        )
                        with anyio.move_on_after(_PIPES_SECONDS):
                            for done in readers_done:
                                await done.wait()
                    for shield in shields:
                        shield.cancel()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(GRACE_SECONDS):
                await process.aclose()
            self.exit_status = process.returncode
            self.log.close()

    async def _stop(
        self,
        process: anyio.abc.Process,
        to_server: MemoryObjectSendStream[SessionMessage],
        from_server: MemoryObjectReceiveStream[SessionMessage | Exception],
        exited: anyio.Event,
        writer_done: anyio.Event,
        output_ended: anyio.Event,
    ) -> None:
        """Close the input (after a short flush), give the server its grace period, then end
        its process group, whether or not the server itself has exited."""
        if output_ended.is_set():
            # The server closed its output, so it is probably exiting: let its exit be seen as
            # its own, not as the result of what follows.
            with anyio.move_on_after(_FLUSH_SECONDS):
                await exited.wait()
        self._stopping = True
        from_server.close()
        to_server.close()
        with anyio.move_on_after(_FLUSH_SECONDS):
            await writer_done.wait()
        if process.stdin is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.aclose()
        with anyio.move_on_after(GRACE_SECONDS):
            await exited.wait()
        await end_group(process.pid, GRACE_SECONDS)
        with anyio.move_on_after(GRACE_SECONDS):
            await exited.wait()
        if not exited.is_set():
            log.warning(
                "MCP server process %d is still alive after SIGKILL; abandoning it", process.pid
            )

    async def _read_output(
        self,
        process: anyio.abc.Process,
        to_session: MemoryObjectSendStream[SessionMessage | Exception],
        done: anyio.Event,
    ) -> None:
        """Hand each JSON-RPC line of the server's output to the session; once the session is
        gone, keep reading (and dropping) so the server never blocks on a full pipe. A line
        longer than :data:`MAX_LINE_BYTES` ends the session and the server."""
        assert process.stdout is not None
        pending = bytearray()
        session_open = True
        try:
            async with to_session:
                async for chunk in process.stdout:
                    start = 0
                    while (end := chunk.find(b"\n", start)) >= 0:
                        line = (
                            chunk[start:end] if not pending else bytes(pending + chunk[start:end])
                        )
                        pending.clear()
                        start = end + 1
                        message = self._parse(line)
                        if message is None or not session_open:
                            continue
                        try:
                            await to_session.send(message)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            session_open = False
                    pending += chunk[start:]
                    if len(pending) > MAX_LINE_BYTES:
                        self._cut(len(pending))
                        break
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            done.set()
        if self.cut_off is not None:
            await end_group(process.pid, GRACE_SECONDS)

    def _cut(self, size: int) -> None:
        """Give up on a server whose line passed :data:`MAX_LINE_BYTES` (``size`` bytes read of
        it so far): the session ends, and the caller ends the server."""
        self._stopping = True  # its exit is hermes' doing, not its own
        self.cut_off = (
            f"it wrote a line of more than {MAX_LINE_BYTES // (1024 * 1024)} MiB on its output "
            "(the longest message hermes reads), so hermes ended it"
        )
        self.log.note(f"{self.cut_off} after {size} bytes of the line")

    def _parse(self, line: bytes) -> SessionMessage | None:
        if not line.strip():
            return None
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError as exc:
            lenient = _with_surrogates(line)
            if lenient is not None:
                return SessionMessage(lenient)
            shown = line[:200].decode("utf-8", errors="replace")
            self.log.note(f"skipped a line of its output that is not JSON-RPC: {shown!r}")
            return _unreadable_answer(line, exc)
        return SessionMessage(message)

    async def _copy_stderr(self, process: anyio.abc.Process, done: anyio.Event) -> None:
        assert process.stderr is not None
        try:
            async for chunk in process.stderr:
                self.log.write(chunk)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            done.set()

    async def _write_input(
        self,
        process: anyio.abc.Process,
        from_session: MemoryObjectReceiveStream[SessionMessage],
        done: anyio.Event,
    ) -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for item in from_session:
                    text = model_json(item.message)  # never a lone surrogate: see its module
                    await process.stdin.send((text + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            done.set()


_NAMES: Final = (b"id", b"result", b"error", b"method")
"""The keys of an answer's object (and ``method``, a request's) that :func:`_answered_id` reads."""
_COLON: Final = re.compile(rb"\s*:\s*")
_OBJECT: Final = re.compile(rb"\s*\{")
_ID: Final = re.compile(rb'(-?\d{1,18}|"[^"]{0,1200}")\s*[,}]')
"""An ``id`` as written, matched in the scan's copy of a line (where no quote is left inside a
string): a number, or a string of up to 1,200 bytes (200 characters written ``\\uXXXX``), decoded
from the line itself as JSON decodes it, escapes and all."""
MAX_KEYS_SCANNED: Final = 10_000
"""How many keys named like an answer's (``id``, ``result``, ``error``, ``method``), at any
depth, :func:`_answered_id` looks at in one line before giving up on it; ten times as many
places where such a name ends a string."""
MAX_QUOTES_SCANNED: Final = 1_000_000
"""How many quotes of strings that hold a bracket :func:`_answered_id` splits a line at before
giving up on it (a string without one costs nothing)."""
_NOT_STRUCTURE: Final = bytes(byte for byte in range(256) if byte not in b'"[]{}')


def _outside_strings(text: bytes, inside: bool) -> tuple[int, bool, int]:
    """The brackets opened less those closed outside strings in ``text`` (its escapes made
    plain: every quote opens or closes a string), whether its end is in a string given whether
    its start is, and how many quotes had to be split at."""
    bare = text.translate(None, _NOT_STRUCTURE)
    odd = bare.count(b'"') % 2 == 1
    # Two quotes side by side hold no bracket between them: taken out, every bracket stays as
    # much inside or outside a string as it was, and only strings holding one are left to split.
    bare = bare.replace(b'""', b"")
    quotes = bare.count(b'"')
    if quotes > MAX_QUOTES_SCANNED:
        return 0, inside, quotes
    outside = b"".join(bare.split(b'"')[1 if inside else 0 :: 2])
    balance = outside.count(b"{") + outside.count(b"[")
    balance -= outside.count(b"}") + outside.count(b"]")
    return balance, inside ^ odd, quotes


def _keys(text: bytes) -> Iterator[tuple[int, bytes, int]]:
    """Each key of ``text`` named in :data:`_NAMES`, in order: the place of its opening quote,
    its name, and the place of its value. Each name is looked for with ``bytes.find``: a
    pattern tried at every quote costs seconds on a line of quotes."""
    places = {name: text.find(name + b'"') for name in _NAMES}
    for _ in range(10 * MAX_KEYS_SCANNED):
        found = [(place, name) for name, place in places.items() if place >= 0]
        if not found:
            return
        place, name = min(found)
        places[name] = text.find(name + b'"', place + 1)
        colon = _COLON.match(text, place + len(name) + 1)
        if place > 0 and text[place - 1] == ord('"') and colon is not None:
            yield place - 1, name, colon.end()
    raise _GiveUp


class _GiveUp(Exception):
    """The scan of a line passed one of its bounds."""


def _answered_id(line: bytes) -> int | str | None:
    """The ``id`` of the answer ``line`` holds, wherever it is among the members of the line's
    object, found without reading the line as JSON (which fails on it): each key named like an
    answer's is found (:func:`_keys`), and its depth counted from the brackets before it outside
    strings (:func:`_outside_strings`). ``None`` unless the line is an object with, at its top,
    one ``id`` and a ``result`` or ``error`` but no ``method`` (a request of the server's is no
    answer), or when the scan would pass :data:`MAX_KEYS_SCANNED` or
    :data:`MAX_QUOTES_SCANNED`."""
    if not _OBJECT.match(line):
        return None
    text = line
    if b"\\" in text:
        # Same length, and no quote left inside a string: an escaped backslash, an escaped quote.
        text = text.replace(b"\\\\", b"__").replace(b'\\"', b"_'")
    depth = at = split = 0
    inside = False
    ids: list[bytes] = []
    names: set[bytes] = set()
    try:
        for seen, (start, name, value) in enumerate(_keys(text)):
            balance, inside, quotes = _outside_strings(text[at:start], inside)
            split += quotes
            if seen == MAX_KEYS_SCANNED or split > MAX_QUOTES_SCANNED:
                return None
            depth, at = depth + balance, start
            if inside or depth != 1:
                continue
            names.add(name)
            if name == b"id" and (found := _ID.match(text, value)) is not None:
                # From the line itself: its copy has the string's escapes blanked.
                ids.append(line[found.start(1) : found.end(1)])
    except _GiveUp:
        return None
    if len(ids) != 1 or b"method" in names or not names & {b"result", b"error"}:
        return None
    try:
        ident: int | str = json.loads(ids[0])
    except ValueError:  # a control character, bytes not UTF-8 or an escape JSON lacks (\x)
        return None
    return ident


_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")


def _with_surrogates(line: bytes) -> mcp_types.JSONRPCMessage | None:
    """The message ``line`` holds when only a lone surrogate's escape (``"\\ud800"``, which the
    SDK's reader refuses) kept it from being read, each as U+FFFD (``hermes_core/_encodable.py``:
    the text goes on to a model); ``None`` for any other line."""
    if _SURROGATE_ESCAPE.search(line) is None:
        return None
    try:
        data = json.loads(line)
        return mcp_types.jsonrpc_message_adapter.validate_python(
            encodable_value(data), by_name=False
        )
    except (ValueError, RecursionError):
        return None


def _unreadable_answer(line: bytes, error: ValueError) -> SessionMessage | None:
    """The error answer to the request that ``line`` answers, when hermes cannot read it (JSON
    nested deeper than the SDK's reader goes, an envelope that breaks JSON-RPC) and its ``id``
    is found (:func:`_answered_id`), so that the call ends at once saying why, not at its
    timeout; ``None`` for any other line."""
    ident = _answered_id(line)
    if ident is None:
        return None
    problem = validation_problem(error) if isinstance(error, ValidationError) else str(error)
    answer = mcp_types.JSONRPCError(
        jsonrpc="2.0",
        id=ident,
        error=mcp_types.ErrorData(
            code=mcp_types.INTERNAL_ERROR,
            message=f"hermes cannot read the server's answer: {problem}",
            data=UNREADABLE_ANSWER,
        ),
    )
    return SessionMessage(answer)
