"""JSON-RPC 2.0 as lines of JSON on this process's stdin and stdout: what ``hermes serve`` and
``hermes acp`` share.

- :func:`claim_stdio`: the protocol gets private duplicates of descriptors 0 and 1; descriptor
  1 then writes to stderr and descriptor 0 reads nothing, so nothing a plugin prints, a library
  logs or a child process writes can reach the client.
- :class:`BoundedLines`: lines split out of what the client writes, none kept past a bound
  (:data:`MAX_LINE_BYTES`): a longer line is read to its end and dropped, a
  :class:`LineRefused` in its place.
- :func:`read_message`: the rules for a line that is no message. Not JSON: a parse error
  (``-32700``); JSON, but neither a request, a notification nor a response: an invalid request
  (``-32600``). :meth:`LineRefused.answer` is the error the client gets, with ``"id": null``
  (JSON-RPC 2.0: the id could not be read), and the connection reads on.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any, Final

__all__ = [
    "INVALID_REQUEST",
    "MAX_LINE_BYTES",
    "PARSE_ERROR",
    "BoundedLines",
    "LineRefused",
    "claim_stdio",
    "read_message",
]

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""The longest line hermes reads as one JSON-RPC message, from anyone: an MCP server's output
(a listing, a result), an HTTP server's answer, ``hermes serve``'s and ``hermes acp``'s
clients (HTTP serve's request body too). Results are cut far shorter (``max_result_chars``);
this bounds what a broken or hostile peer can make hermes hold before anything reads it."""
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
_MESSAGES: Final = {PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid Request"}

_log = logging.getLogger(__name__)


def claim_stdio() -> tuple[int, int]:
    """Private duplicates of stdin and stdout for the protocol; descriptor 1 then writes to
    stderr and descriptor 0 reads nothing."""
    sys.stdout.flush()
    protocol_in = os.dup(0)
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return protocol_in, protocol_out


class LineRefused(Exception):
    """A line from the client that is no message: its JSON-RPC error ``code`` and ``details``."""

    def __init__(self, code: int, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details

    def answer(self, ident: int | str | None = None) -> dict[str, Any]:
        """The error the client gets (``ident``: the id of a request that could be read), the
        refusal noted on stderr."""
        _log.warning("a line from the client answered with %s: %s", self.code, self.details)
        error = {"code": self.code, "message": _MESSAGES[self.code]}
        return {
            "jsonrpc": "2.0",
            "id": ident,
            "error": {**error, "data": {"details": self.details}},
        }


def read_message(line: bytes | str) -> dict[str, Any]:
    """The message ``line`` holds (a JSON object with a ``method`` or an ``id``: a request, a
    notification or a response); :class:`LineRefused` when it holds none."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise LineRefused(PARSE_ERROR, f"not JSON: {exc}") from None
    if not isinstance(message, dict) or ("method" not in message and "id" not in message):
        raise LineRefused(
            INVALID_REQUEST,
            "not a JSON-RPC request, notification or response (a batch is not read either)",
        )
    return message


class BoundedLines:
    """The lines of a stream fed in chunks, without their newlines; a line longer than ``limit``
    bytes is not kept: what was read of it is let go, the rest is skipped up to its newline, and
    a :class:`LineRefused` stands in its place."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._skipped = 0
        """Bytes of a line too long, so far (0: none is being skipped)."""

    def feed(self, chunk: bytes) -> list[bytes | LineRefused]:
        """The lines ``chunk`` ends, in order."""
        lines: list[bytes | LineRefused] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self._skipped:
                lines.append(self._too_long(end - start))
            elif self._pending:
                self._pending += chunk[start:end]
                lines.append(self._take())
            else:
                size = end - start
                lines.append(chunk[start:end] if size <= self.limit else self._too_long(size))
            start = end + 1
        if self._skipped:
            self._skipped += len(chunk) - start
        else:
            self._pending += chunk[start:]
            if len(self._pending) > self.limit:
                self._skipped = len(self._pending)
                self._pending = bytearray()
        return lines

    def end(self) -> list[bytes | LineRefused]:
        """The last line when the stream ended without a newline after it."""
        if self._skipped:
            return [self._too_long(0)]
        return [self._take()] if self._pending else []

    def _take(self) -> bytes | LineRefused:
        # bytes, not the bytearray: a JSON parser copies a bytearray whole before it reads it.
        size = len(self._pending)
        line = bytes(self._pending) if size <= self.limit else self._too_long(size)
        self._pending = bytearray()
        return line

    def _too_long(self, more: int) -> LineRefused:
        size = self._skipped + more
        self._skipped = 0
        mib, rest = divmod(self.limit, 1024 * 1024)
        bound = f"{self.limit} bytes" if rest else f"{mib} MiB"
        return LineRefused(
            INVALID_REQUEST,
            f"a line longer than {bound}, the longest message hermes reads ({size} bytes, "
            "skipped); send a smaller message",
        )
