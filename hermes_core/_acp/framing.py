"""The newline-delimited JSON-RPC of ``hermes acp``, answering a line that is no message.

The ACP SDK's own stdio framing logs a line that is not JSON and reads on without a word, so
a client that sent it waits for an answer forever; a line of JSON that is not an object (``[]``,
``42``) ends its connection. :class:`LineTransport` is the SDK's message-level transport
(``acp.connection.Connection`` takes one) over the same streams, answering as JSON-RPC 2.0
says, by the rules ``hermes serve`` follows too (:func:`~hermes_core._jsonrpc_lines.read_message`):
a line that is not JSON gets a parse error (``-32700``), one that is JSON but neither a
request, a notification nor a response an invalid request (``-32600``), both with
``"id": null``; the connection then reads the next line.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hermes_core._jsonrpc_lines import LineRefused, read_message

__all__ = ["LineTransport"]


class LineTransport:
    """JSON-RPC messages as lines of JSON over ``reader`` and ``writer`` (the SDK's
    ``Transport``: ``receive`` gives the next message, ``None`` at end of input)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def send(self, message: dict[str, Any]) -> None:
        """Write ``message`` as one line."""
        # One write per message: concurrent senders never interleave inside a line.
        self._writer.write((json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8"))
        await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next message; a line that is none is answered with its error and skipped."""
        while True:
            line = await self._read_line()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                return read_message(line)
            except LineRefused as refused:
                await self.send(refused.answer())

    async def close(self) -> None:
        """Nothing to release: the streams belong to the process."""

    async def _read_line(self) -> bytes:
        """The next line with its newline (what came before end of input when there is none);
        a line past the reader's limit is read whole, as the SDK reads it."""
        chunks: list[bytes] = []
        while True:
            try:
                chunks.append(await self._reader.readuntil(b"\n"))
            except asyncio.LimitOverrunError as exc:
                chunks.append(await self._reader.readexactly(exc.consumed))
                continue
            except asyncio.IncompleteReadError as exc:
                chunks.append(exc.partial)
            return b"".join(chunks)
