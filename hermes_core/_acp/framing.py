"""The newline-delimited JSON-RPC of ``hermes acp``, answering a line that is no message.

The ACP SDK's own stdio framing logs a line that is not JSON and reads on without a word, so
a client that sent it waits for an answer forever; a line of JSON that is not an object (``[]``,
``42``) ends its connection. :class:`LineTransport` is the SDK's message-level transport
(``acp.connection.Connection`` takes one) over the same streams, answering as JSON-RPC 2.0
says: a line that is not JSON gets a parse error (``-32700``), one that is JSON but neither a
request, a notification nor a response an invalid request (``-32600``), both with
``"id": null``; the connection then reads the next line.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Final

__all__ = ["INVALID_REQUEST", "PARSE_ERROR", "LineTransport"]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600

_log = logging.getLogger(__name__)


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
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:
                await self._refuse(PARSE_ERROR, "Parse error", f"not JSON: {exc}")
                continue
            if not isinstance(message, dict) or ("method" not in message and "id" not in message):
                await self._refuse(
                    INVALID_REQUEST,
                    "Invalid Request",
                    "not a JSON-RPC request, notification or response (ACP sends no batches)",
                )
                continue
            return message

    async def close(self) -> None:
        """Nothing to release: the streams belong to the process."""

    async def _refuse(self, code: int, message: str, details: str) -> None:
        _log.warning("a line from the client answered with %s: %s", code, details)
        error = {"code": code, "message": message, "data": {"details": details}}
        await self.send({"jsonrpc": "2.0", "id": None, "error": error})

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
