"""The JSON answers of an MCP server over streamable HTTP, read up to a bound.

The SDK reads an ``application/json`` answer whole (its SSE events it bounds itself, at 1 MiB):
a server that sends a body without end would make hermes hold all of it until the call's
timeout. :func:`bound_json_answers` makes the client ask for uncompressed answers
(``Accept-Encoding: identity``) and read each JSON answer up to
:data:`~hermes_core._jsonrpc_lines.MAX_LINE_BYTES`, the bound of a stdio server's messages. A
server or proxy that compresses all the same (gzip, deflate) is read too: the answer is
expanded here, a megabyte at a time, every gzip member of it (up to :data:`MAX_MEMBERS`), and
the bound holds for what it expands to, so a few kilobytes of gzip that would expand to
gigabytes are given up on at the bound, and for the compressed bytes as sent, so an endless
answer that expands to nothing is too. Past it, in an encoding hermes does not expand, or cut
short of the end of its compressed data, reading fails with a ``StreamError``, which the SDK
turns into an error answer to its request: the call ends at once, saying why. An SSE answer
compressed all the same is expanded here the same way (httpx would read one gzip member only),
without a bound on the whole: the SDK holds each event to 1 MiB.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import httpx2

from hermes_core._expanding import WINDOW_BITS, Expander, ExpandError, content_codings
from hermes_core._jsonrpc_lines import MAX_LINE_BYTES
from hermes_core._redaction import shown_url

__all__ = ["bound_json_answers"]

log = logging.getLogger("hermes_core._mcp")

MAX_MEMBERS = 100_000
"""The most gzip members hermes reads of one answer: a proxy joins a few, and each needs a
decompressor of its own, however little it holds (an endless run of empty ones expands to
nothing, so the bound on what an answer expands to never ends it)."""


class _Expander:
    """One answer's body in ``encoding``, expanded (:class:`~hermes_core._expanding.Expander`):
    every gzip member of it, up to ``max_members``, and only a whole stream, up to its end
    (gzip's trailer, zlib's checksum); what cannot be read is a ``StreamError`` naming the
    server's URL, which the SDK makes the error answer of its request."""

    def __init__(self, encoding: str, url: str, max_members: int | None = MAX_MEMBERS) -> None:
        self._encoding = encoding
        self._url = url
        self._expander = Expander(encoding, max_members=max_members, refuse_trailing=True)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """What ``data`` (the next bytes of the body) expands to."""
        try:
            yield from self._expander.pieces(data)
        except ExpandError as exc:
            raise self._error(exc) from None

    def flush(self) -> bytes:
        """The rest, once the body has ended; the body must have ended with its stream."""
        try:
            return self._expander.flush(whole=True)
        except ExpandError as exc:
            raise self._error(exc) from None

    def _error(self, exc: ExpandError) -> httpx2.StreamError:
        encoding, url = self._encoding, self._url
        if exc.kind == "trailing":
            return httpx2.StreamError(
                f"the deflate-compressed answer of {url} goes on past the end of its "
                "compressed data"
            )
        if exc.kind == "members":
            return httpx2.StreamError(
                f"the gzip-compressed answer of {url} has more than {int(exc.detail):,} gzip "
                "members (the most hermes reads of one answer); it was not read"
            )
        if exc.kind == "cut_short":
            return _CutShort(
                f"the {encoding}-compressed answer of {url} is cut short: it ends before the "
                f"end of its {encoding} data (its trailer, or more)"
            )
        return httpx2.StreamError(
            f"{url} sent a {encoding}-compressed answer that does not expand: {exc.detail}"
        )


class _CutShort(httpx2.StreamError):
    """A compressed body that ended before the end of its compressed data."""


class _BoundedAnswer(httpx2.AsyncByteStream):
    """An answer's body, expanded from ``encoding`` when it has one, refused past
    :data:`MAX_LINE_BYTES` (as sent, or expanded) or, in an encoding hermes does not expand, at
    once."""

    def __init__(self, inner: httpx2.AsyncByteStream, url: str, encoding: str) -> None:
        self._inner = inner
        self._url = url
        self._encoding = encoding

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._encoding and self._encoding not in WINDOW_BITS:
            raise httpx2.StreamError(
                f"{self._url} sent a {self._encoding}-compressed answer although hermes asked "
                "for none (Accept-Encoding: identity); hermes expands gzip and deflate only"
            )
        expander = _Expander(self._encoding, self._url) if self._encoding else None
        read = sent = 0
        async for chunk in self._inner:
            if not chunk:
                continue
            sent += len(chunk)
            if expander is not None and sent > MAX_LINE_BYTES:
                # What expands to little (empty blocks, empty members) may come without end.
                raise httpx2.StreamError(
                    f"the answer of {self._url} is more than {MAX_LINE_BYTES // (1024 * 1024)} "
                    f"MiB as sent ({self._encoding}-compressed; the longest message hermes "
                    "reads); it was not read"
                )
            for piece in expander.pieces(chunk) if expander is not None else (chunk,):
                read += len(piece)
                self._check(read)
                yield piece
        if expander is not None and (rest := expander.flush()):
            self._check(read + len(rest))
            yield rest

    def _check(self, read: int) -> None:
        if read > MAX_LINE_BYTES:
            expands = f"expands ({self._encoding}) to" if self._encoding else "is"
            raise httpx2.StreamError(
                f"the answer of {self._url} {expands} more than "
                f"{MAX_LINE_BYTES // (1024 * 1024)} MiB (the longest message hermes reads); "
                "it was not read"
            )

    async def aclose(self) -> None:
        await self._inner.aclose()


def _encoding(response: httpx2.Response) -> str:
    """The answer's content coding, ``''`` for none; more than one is given as they came."""
    return ", ".join(content_codings(response.headers))


class _ExpandedEvents(httpx2.AsyncByteStream):
    """An SSE answer's body, compressed all the same, expanded as a JSON answer's is but without
    a bound on the whole (a stream of events may last; the SDK holds each event to 1 MiB). A
    body cut short ends as a dropped stream does, and one that does not expand fails as httpx's
    own expanding would, so that the SDK resumes or reconnects as it does for those; why is
    logged."""

    def __init__(self, inner: httpx2.AsyncByteStream, url: str, encoding: str) -> None:
        self._inner = inner
        self._expander = _Expander(encoding, url, max_members=None)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                if chunk:
                    for piece in self._expander.pieces(chunk):
                        yield piece
            if rest := self._expander.flush():
                yield rest
        except _CutShort as exc:
            log.warning("%s; hermes takes it for a stream that ended there", exc)
        except httpx2.StreamError as exc:
            log.warning("%s", exc)
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _bound(response: httpx2.Response) -> None:
    kind = response.headers.get("content-type", "").lower()
    if not isinstance(response.stream, httpx2.AsyncByteStream):
        return
    encoding = _encoding(response)
    url = shown_url(str(response.request.url))
    if kind.startswith("application/json"):
        response.stream = _BoundedAnswer(response.stream, url, encoding)
    elif kind.startswith("text/event-stream") and encoding in WINDOW_BITS:
        response.stream = _ExpandedEvents(response.stream, url, encoding)
    else:
        return
    # The stream now gives the answer expanded: httpx must not expand it again.
    if encoding in WINDOW_BITS:
        del response.headers["content-encoding"]


def bound_json_answers(client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    """``client``, asking for uncompressed answers and reading each JSON answer, expanded when
    it comes compressed all the same, up to :data:`~hermes_core._jsonrpc_lines.MAX_LINE_BYTES`,
    and expanding a compressed SSE answer itself (see the module docstring)."""
    client.headers["accept-encoding"] = "identity"
    hooks = client.event_hooks
    hooks["response"].append(_bound)
    client.event_hooks = hooks
    return client
