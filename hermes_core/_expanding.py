"""Bodies sent gzip- or deflate-compressed, expanded a bounded piece at a time.

httpx expands each chunk of the network whole, and a chain of codings in one step, so a few
kilobytes of gzip inside gzip would be gigabytes in memory before a caller's cap is looked at.
An :class:`Expander` makes at most :data:`PIECE` bytes a step: a caller that counts what it is
given stops at its cap having held at most a piece more. Every gzip member of a body is read
(RFC 1952 lets a body be several, one after the other; a loop, not recursion, since a chunk can
hold thousands). A deflate body is zlib's format, or raw deflate when it does not start with
zlib's header (some servers send it so, and httpx reads it), told from its first two bytes
however the body comes in chunks.

What counts as an error beyond data that does not expand is the caller's choice (a bound on
members, data after a deflate stream, a body cut short); each is an :class:`ExpandError` of
its ``kind``, which the caller words for its own readers (the fetch tools, an MCP answer).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Final, Literal, Protocol

__all__ = ["PIECE", "WINDOW_BITS", "ExpandError", "Expander", "content_codings"]

WINDOW_BITS: Final = {
    "gzip": zlib.MAX_WBITS | 16,
    "x-gzip": zlib.MAX_WBITS | 16,
    "deflate": zlib.MAX_WBITS,
}
"""The codings hermes expands, as zlib reads them."""
PIECE: Final = 1024 * 1024
"""The most one step of expanding makes at once."""

ExpandKind = Literal["corrupt", "trailing", "members", "cut_short"]


class _Headers(Protocol):
    def get_list(self, key: str, split_commas: bool = False) -> list[str]: ...


def content_codings(headers: _Headers) -> list[str]:
    """The codings of an answer's ``Content-Encoding``, lowercased, in the order they were
    applied, ``identity`` and empty entries left out (httpx's and the MCP SDK's headers)."""
    values = headers.get_list("content-encoding", split_commas=True)
    codings = [value.strip().lower() for value in values]
    return [coding for coding in codings if coding and coding != "identity"]


class ExpandError(Exception):
    """The body could not be expanded: ``kind`` says why (``corrupt``: zlib refused its data,
    ``detail`` its words; ``trailing``: data after a deflate stream; ``members``: more gzip
    members than allowed; ``cut_short``: the body ended inside its compressed stream)."""

    def __init__(self, kind: ExpandKind, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind: ExpandKind = kind
        self.detail = detail


class Expander:
    """One body in ``coding`` (a key of :data:`WINDOW_BITS`), expanded at most :data:`PIECE`
    bytes a step. ``max_members`` bounds the gzip members read (``None``: no bound); with
    ``refuse_trailing``, data after the end of a deflate stream is an error, else it is not
    read."""

    def __init__(
        self, coding: str, *, max_members: int | None = None, refuse_trailing: bool = False
    ) -> None:
        self.coding = coding
        self.max_members = max_members
        self.refuse_trailing = refuse_trailing
        self.members = 1
        self._zlib = zlib.decompressobj(WINDOW_BITS[coding])
        self._head: bytes | None = b"" if coding == "deflate" else None
        self._started = False

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """What ``data``, the next bytes of the body, expands to."""
        self._started = True
        if self._head is not None:
            data = self._head + data
            if len(data) < 2:  # a server flushing byte by byte: too few to tell the format
                self._head = data
                return
            self._head = None
            if not _zlib_header(data):
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
        piece = self._expand(data)
        while True:
            while piece:
                yield piece
                piece = self._expand(self._zlib.unconsumed_tail)
            rest = self._zlib.unused_data if self._zlib.eof else b""
            if not rest:
                return
            if self.coding == "deflate":
                if self.refuse_trailing:
                    raise ExpandError("trailing")
                return  # what follows the end of a deflate stream is not read
            self.members += 1
            if self.max_members is not None and self.members > self.max_members:
                raise ExpandError("members", str(self.max_members))
            self._zlib = zlib.decompressobj(WINDOW_BITS[self.coding])  # the next member
            piece = self._expand(rest)

    def flush(self, *, whole: bool = False) -> bytes:
        """What is left once the body has ended; with ``whole``, a body that ended inside its
        compressed stream (before gzip's trailer or zlib's checksum) is an error, else it gives
        what it held."""
        rest = self._expand(self._head) if self._head else b""  # a deflate body of one byte
        self._head = None
        try:
            rest += self._zlib.flush()  # at most zlib's window: the input is all consumed
        except zlib.error as exc:
            raise ExpandError("corrupt", str(exc)) from None
        if whole and self._started and not self._zlib.eof:
            raise ExpandError("cut_short")
        return rest

    def _expand(self, data: bytes) -> bytes:
        try:
            return self._zlib.decompress(data, PIECE)
        except zlib.error as exc:
            raise ExpandError("corrupt", str(exc)) from None


def _zlib_header(data: bytes) -> bool:
    """Whether ``data`` begins with a zlib header (RFC 1950: method 8, a window of at most
    32 KiB, and the check bits) rather than raw deflate."""
    method, flags = data[0], data[1]
    return method & 0x0F == 8 and method >> 4 <= 7 and (method << 8 | flags) % 31 == 0
