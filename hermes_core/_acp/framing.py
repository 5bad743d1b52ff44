"""The newline-delimited JSON-RPC of ``hermes acp``, answering a line that is no message.

The ACP SDK's own stdio framing logs a line that is not JSON and reads on without a word, so
a client that sent it waits for an answer forever; a line of JSON that is not an object (``[]``,
``42``) ends its connection. :class:`LineTransport` is the SDK's message-level transport
(``acp.connection.Connection`` takes one) over the same streams, answering as JSON-RPC 2.0
says, by the rules ``hermes serve`` follows too (:func:`~hermes_core._jsonrpc_lines.read_message`):
a line that is not JSON gets a parse error (``-32700``), one that is JSON but neither a
request, a notification nor a response an invalid request (``-32600``), both with
``"id": null``; the connection then reads the next line. A line longer than
:data:`~hermes_core._jsonrpc_lines.MAX_LINE_BYTES` gets an invalid request too, and is never
held whole (the SDK's framing read any line whole past its reader's limit).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Final

from hermes_core._encodable import json_line
from hermes_core._jsonrpc_lines import MAX_LINE_BYTES, BoundedLines, LineRefused, read_message

__all__ = ["LineTransport"]

_READ_SIZE: Final = 65536


class LineTransport:
    """JSON-RPC messages as lines of JSON over ``reader`` and ``writer`` (the SDK's
    ``Transport``: ``receive`` gives the next message, ``None`` at end of input)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lines = BoundedLines(MAX_LINE_BYTES)
        self._ready: deque[bytes | LineRefused] = deque()
        self._ended = False

    async def send(self, message: dict[str, Any]) -> None:
        """Write ``message`` as one line."""
        # One write per message: concurrent senders never interleave inside a line.
        self._writer.write((json_line(message) + "\n").encode("utf-8"))
        await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next message; a line that is none is answered with its error and skipped."""
        while True:
            line = await self._next_line()
            if line is None:
                return None
            try:
                if isinstance(line, LineRefused):
                    raise line
                if line.strip():
                    return read_message(line)
            except LineRefused as refused:
                await self.send(refused.answer())

    async def close(self) -> None:
        """Nothing to release: the streams belong to the process."""

    async def _next_line(self) -> bytes | LineRefused | None:
        """The next line without its newline (the last one may have none); ``None`` at end
        of input."""
        while not self._ready and not self._ended:
            chunk = await self._reader.read(_READ_SIZE)
            self._ended = not chunk
            self._ready.extend(self._lines.feed(chunk) if chunk else self._lines.end())
        return self._ready.popleft() if self._ready else None
