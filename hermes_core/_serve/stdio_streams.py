"""``hermes serve``'s stdin and stdout as the streams of messages the SDK's server runs on.

The SDK's ``stdio_server`` reads a line of any length (a 300 MB line made serve hold 1.2 GB)
and drops a line it cannot read without a word, so its client waits for an answer that never
comes. :func:`stdio_streams` is its replacement, over the same kind of streams
(``SessionMessage`` objects, the sender's context carried as the SDK carries it):

- the standard streams are claimed before anything else runs
  (:func:`~hermes_core._jsonrpc_lines.claim_stdio`): stdout carries protocol and nothing else;
- the input is split into lines of at most
  :data:`~hermes_core._jsonrpc_lines.MAX_LINE_BYTES` (the longest message hermes reads anywhere,
  and HTTP serve's body limit): a longer one is skipped to its newline, never held whole
  (:class:`~hermes_core._jsonrpc_lines.BoundedLines`);
- a line is read as the SDK reads it (UTF-8, a byte that is not replaced, then the JSON-RPC
  message types); a line that is no message is answered as JSON-RPC 2.0 says
  (:func:`~hermes_core._jsonrpc_lines.read_message`), a request MCP cannot read with an invalid
  request under its own ``id`` (``null`` when MCP does not allow its ``id``, which the
  message types would take for a notification), and the next line is read;
- every message is written as one line;
- every request read is answered: serving ends when the client closes stdin, and the SDK then
  cancels the calls in flight, answering each ``-32000`` "Connection closed", but not one
  cancelled before its handler began (a script that sends its calls and closes stdin at once
  got no answer to most of them): :class:`_Owed` keeps the ids still owed an answer, and
  those left at the end get that same error (not a call the client cancelled itself: JSON-RPC
  answers nothing more for it).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any, Final

import anyio
import anyio.to_thread
import mcp_types
from mcp.shared._context_streams import (
    ContextReceiveStream,
    ContextSendStream,
    create_context_streams,
)
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, TypeAdapter, ValidationError

from hermes_core._encodable import encodable_json, model_json
from hermes_core._jsonrpc_lines import (
    INVALID_REQUEST,
    MAX_LINE_BYTES,
    BoundedLines,
    LineRefused,
    claim_stdio,
    read_message,
)
from hermes_core._mcp.failures import validation_problem
from hermes_core._serve.batches import batch_refusal, element_refusal

__all__ = ["stdio_streams"]

_READ_SIZE: Final = 65536
"""Bytes asked of stdin at a time (a pipe's buffer on Linux)."""
_ADAPTER: Final = mcp_types.jsonrpc_message_adapter


class _Ident(BaseModel):
    """Whether a message has an ``id`` (in ``model_fields_set``); its other keys skipped."""

    id: Any = None


_IDENT: Final = TypeAdapter(_Ident)


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[
    tuple[ContextReceiveStream[SessionMessage | Exception], ContextSendStream[SessionMessage]]
]:
    """The messages the client sends on stdin, and the stream whose messages it reads on stdout
    (see the module docstring); the streams are claimed on entry."""
    protocol_in, protocol_out = claim_stdio()
    to_session, from_client = create_context_streams[SessionMessage | Exception](0)
    to_client, from_session = create_context_streams[SessionMessage](0)
    reading = anyio.CancelScope()
    owed = _Owed()
    batches = _Batches()
    async with anyio.create_task_group() as group:
        group.start_soon(_read, protocol_in, to_session, to_client.clone(), reading, owed, batches)
        group.start_soon(_write, protocol_out, from_session, owed, batches)
        last_answers = to_client.clone()
        try:
            yield from_client, to_client
        finally:
            reading.cancel()
            await to_client.aclose()
            async with last_answers:
                for ident in owed.left():
                    await last_answers.send(_connection_closed(ident))


async def _read(
    fd: int,
    to_session: ContextSendStream[SessionMessage | Exception],
    answers: ContextSendStream[SessionMessage],
    scope: anyio.CancelScope,
    owed: _Owed,
    batches: _Batches,
) -> None:
    stdin = _Input(fd)
    with scope, contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async with to_session, answers:
            while found := await anyio.to_thread.run_sync(stdin.next_lines, abandon_on_cancel=True):
                for line in found:
                    batch = _batch(line)
                    if batch is not None:
                        await _read_batch(batch, to_session, answers, owed, batches)
                        continue
                    message = _message(line)
                    if message is None:
                        continue
                    if message[0]:
                        owed.read(message[1].message)
                        flush = batches.read(message[1].message)
                        if flush is not None:
                            await answers.send(flush)
                    await (to_session if message[0] else answers).send(message[1])


def _batch(line: bytes | LineRefused) -> list[Any] | None:
    """The elements of ``line`` when it is a JSON array, else ``None``."""
    if isinstance(line, LineRefused) or not line.lstrip().startswith(b"["):
        return None
    try:
        found = json.loads(line.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, list) else None


async def _read_batch(
    batch: list[Any],
    to_session: ContextSendStream[SessionMessage | Exception],
    answers: ContextSendStream[SessionMessage],
    owed: _Owed,
    batches: _Batches,
) -> None:
    """Hand a batch's messages to the session, its refused elements (or the batch whole) to
    the answers; the answers to its requests go out as one array (:class:`_Batches`)."""
    refused = batch_refusal(batch, batches.version)
    if refused is not None:
        await answers.send(_answer(LineRefused(INVALID_REQUEST, refused), None))
        return
    held = _Batch()
    to_send: list[SessionMessage] = []
    taken: set[int | str] = set()
    for element in batch:
        refusal = element_refusal(element, taken)
        ident = element.get("id") if isinstance(element, dict) else None
        if refusal is not None:
            ident = ident if isinstance(ident, int | str) and not isinstance(ident, bool) else None
            held.answers.append(_answer(LineRefused(INVALID_REQUEST, refusal), ident).message)
            continue
        message = _message(json.dumps(element).encode())
        if message is None:
            continue
        if not message[0]:
            held.answers.append(message[1].message)
            continue
        if isinstance(message[1].message, mcp_types.JSONRPCRequest):
            held.pending.add(coerce_request_id(message[1].message.id))
        to_send.append(message[1])
    batches.hold(held)
    for session_message in to_send:
        owed.read(session_message.message)
        flush = batches.read(session_message.message)
        if flush is not None:
            await answers.send(flush)
        await to_session.send(session_message)
    await answers.send(batches.seal(held))


class _Batch:
    """A batch read: the ids of its requests not yet answered, and the answers so far."""

    def __init__(self) -> None:
        self.pending: set[int | str] = set()
        self.answers: list[mcp_types.JSONRPCMessage] = []
        self.sealed = False


class _Batches:
    """The batches whose answers are held until each of their requests has one (then they go
    out as one array), and the protocol version ``initialize`` agreed (``None`` before)."""

    def __init__(self) -> None:
        self.version: str | None = None
        self._initialize: int | str | None = None
        self._held: dict[int | str, _Batch] = {}
        self._flushes: dict[int, _Batch] = {}

    def hold(self, batch: _Batch) -> None:
        """Hold the answers to ``batch``'s requests (before they are sent to the session)."""
        for ident in batch.pending:
            self._held[ident] = batch

    def seal(self, batch: _Batch) -> SessionMessage:
        """All of ``batch`` was sent: the message that writes its answers out once complete
        (for :meth:`route`; nothing is written for it)."""
        batch.sealed = True
        return self._flush_of(batch)

    def read(self, message: mcp_types.JSONRPCMessage) -> SessionMessage | None:
        """Note a message from the client: ``initialize``'s id, or the cancelling of a held
        request, which is answered by nothing (the message to flush its batch then)."""
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == "initialize":
            self._initialize = coerce_request_id(message.id)
        elif (
            isinstance(message, mcp_types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
        ):
            cancelled = cancelled_request_id_from_params(message.params)
            batch = (
                None if cancelled is None else self._held.pop(coerce_request_id(cancelled), None)
            )
            if batch is not None and cancelled is not None:
                batch.pending.discard(coerce_request_id(cancelled))
                return self._flush_of(batch)
        return None

    def _flush_of(self, batch: _Batch) -> SessionMessage:
        flush = mcp_types.JSONRPCNotification(jsonrpc="2.0", method="hermes/batch")
        self._flushes[id(flush)] = batch
        return SessionMessage(flush)

    def route(self, message: mcp_types.JSONRPCMessage) -> list[mcp_types.JSONRPCMessage] | None:
        """What to write for ``message`` going to the client: ``None``: itself; a list: a
        batch's answers as one array when it is complete (nothing while it is not)."""
        batch = self._flushes.pop(id(message), None)
        if batch is None and isinstance(
            message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError
        ):
            ident = None if message.id is None else coerce_request_id(message.id)
            if ident is not None and ident == self._initialize:
                self._agreed(message)
            batch = None if ident is None else self._held.pop(ident, None)
            if batch is None:
                return None
            batch.pending.discard(ident)
            batch.answers.append(message)
        if batch is None:
            return None
        if not batch.sealed or batch.pending or not batch.answers:
            return []
        answers, batch.answers = batch.answers, []
        return answers

    def _agreed(self, message: mcp_types.JSONRPCResponse | mcp_types.JSONRPCError) -> None:
        result = message.result if isinstance(message, mcp_types.JSONRPCResponse) else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str):
            self.version = version


class _Owed:
    """The ids of the client's requests not yet answered (nor cancelled by the client), keyed
    as the SDK correlates them (``"7"`` and ``7`` are one id)."""

    def __init__(self) -> None:
        self.ids: dict[int | str, int | str] = {}

    def read(self, message: mcp_types.JSONRPCMessage) -> None:
        """Note a message from the client: a request is owed an answer, one the client
        cancels (``notifications/cancelled``) no longer is."""
        if isinstance(message, mcp_types.JSONRPCRequest):
            self.ids[coerce_request_id(message.id)] = message.id
        elif (
            isinstance(message, mcp_types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
        ):
            cancelled = cancelled_request_id_from_params(message.params)
            if cancelled is not None:
                self.ids.pop(coerce_request_id(cancelled), None)

    def sent(self, message: mcp_types.JSONRPCMessage) -> None:
        """Note a message to the client: an answer settles what its id was owed."""
        if isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError) and (
            message.id is not None
        ):
            self.ids.pop(coerce_request_id(message.id), None)

    def left(self) -> list[int | str]:
        """The ids still owed an answer, as the client sent them."""
        return list(self.ids.values())


def _connection_closed(ident: int | str) -> SessionMessage:
    """The answer the SDK gives a call it cut short at the end of the input."""
    return SessionMessage(
        mcp_types.JSONRPCError(
            jsonrpc="2.0",
            id=ident,
            error=mcp_types.ErrorData(
                code=mcp_types.CONNECTION_CLOSED, message="Connection closed"
            ),
        )
    )


class _Input:
    """The lines of stdin, read in a worker thread."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lines = BoundedLines(MAX_LINE_BYTES)
        self.ended = False

    def next_lines(self) -> list[bytes | LineRefused]:
        """The lines the next reads end (one thread hop for a line of many reads), none once
        the input has ended. A last line without its newline comes alone and the end at the
        next call, as the SDK's reader gave them: the session cancels its requests in flight
        at the end, and the hop between lets that last request be answered."""
        while not self.ended:
            try:
                chunk = os.read(self.fd, _READ_SIZE)
            except OSError:
                chunk = b""
            if not chunk:
                self.ended = True
                return self.lines.end()
            found = self.lines.feed(chunk)
            if found:
                return found
        return []


def _message(line: bytes | LineRefused) -> tuple[bool, SessionMessage] | None:
    """The message of ``line`` for the session (``True``) or the answer to send back
    (``False``); ``None`` for a blank line."""
    if isinstance(line, LineRefused):
        return False, _answer(line, None)
    try:
        return _checked(_ADAPTER.validate_json(line, by_name=False), line)
    except ValueError:
        return _read_again(line)


def _checked(message: mcp_types.JSONRPCMessage, line: bytes | str) -> tuple[bool, SessionMessage]:
    """``message`` for the session, unless it is a request whose ``id`` MCP does not allow
    (``8.5``, ``true``, ``null``...): the message types ignore such an ``id`` and read a
    notification, which nobody answers."""
    if isinstance(message, mcp_types.JSONRPCNotification) and "id" in (
        _IDENT.validate_json(line).model_fields_set
    ):
        refused = LineRefused(
            INVALID_REQUEST,
            "not a message of MCP: id: a request's id must be an integer or a string",
        )
        return False, _answer(refused, None)
    return True, SessionMessage(message)


def _read_again(line: bytes) -> tuple[bool, SessionMessage] | None:
    """:func:`_message` of a line the message types refused: read again with each byte that is
    not UTF-8 replaced, as the SDK reads its input (decoded only now, so that a large message
    is not held twice), and each lone surrogate's escape as U+FFFD; else the error it is
    answered with."""
    if not line.strip():
        return None
    text = encodable_json(line.decode("utf-8", errors="replace"))
    try:
        return _checked(_ADAPTER.validate_json(text, by_name=False), text)
    except ValueError as exc:
        problem = validation_problem(exc) if isinstance(exc, ValidationError) else str(exc)
    try:
        message = read_message(text)
    except LineRefused as no_message:
        return False, _answer(no_message, None)
    ident = message.get("id") if "method" in message else None
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        ident = None  # a notification, a response, or an id MCP does not allow
    return False, _answer(LineRefused(INVALID_REQUEST, f"not a message of MCP: {problem}"), ident)


def _answer(refused: LineRefused, ident: int | str | None) -> SessionMessage:
    return SessionMessage(mcp_types.JSONRPCError.model_validate(refused.answer(ident)))


async def _write(
    fd: int, from_session: ContextReceiveStream[SessionMessage], owed: _Owed, batches: _Batches
) -> None:
    gone = False
    async with from_session:
        async for item in from_session:
            owed.sent(item.message)
            routed = batches.route(item.message)
            if gone or routed == []:
                continue  # the client closed its end (what is left is dropped), or held
            if routed is None:
                text = _dumped(item.message)
            else:
                text = "[" + ",".join(_dumped(answer) for answer in routed) + "]"
            try:
                await anyio.to_thread.run_sync(_write_all, fd, (text + "\n").encode("utf-8"))
            except OSError:
                gone = True


def _dumped(message: mcp_types.JSONRPCMessage) -> str:
    # A lone surrogate (a file name that is not UTF-8) is sent as U+FFFD: the server died.
    return model_json(message)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
