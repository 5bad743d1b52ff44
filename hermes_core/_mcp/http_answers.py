"""The JSON answers of an MCP server over streamable HTTP, read up to a bound.

The SDK reads an ``application/json`` answer whole (its SSE events it bounds itself, at 1 MiB):
a server that sends a body without end would make hermes hold all of it until the call's
timeout. :func:`bound_json_answers` makes the client ask for uncompressed answers
(``Accept-Encoding: identity``: the size of a compressed body says nothing of what it
expands to) and read each JSON answer up to
:data:`~hermes_core._mcp.stdio.MAX_LINE_BYTES`, the bound of a stdio server's messages. Past
it, or when the answer comes compressed all the same, reading it fails with a
``StreamError``, which the SDK turns into an error answer to its request: the call ends at
once, saying why.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2

from hermes_core._mcp.stdio import MAX_LINE_BYTES

__all__ = ["bound_json_answers"]


class _BoundedAnswer(httpx2.AsyncByteStream):
    """An answer's body, refused past ``limit`` bytes or, with ``encoding``, at once."""

    def __init__(self, inner: httpx2.AsyncByteStream, url: str, encoding: str) -> None:
        self._inner = inner
        self._url = url
        self._encoding = encoding

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._encoding:
            raise httpx2.StreamError(
                f"{self._url} sent a {self._encoding}-compressed answer although hermes asked "
                "for none (Accept-Encoding: identity): hermes reads no compressed answer, as "
                "what it expands to is not known"
            )
        read = 0
        async for chunk in self._inner:
            read += len(chunk)
            if read > MAX_LINE_BYTES:
                raise httpx2.StreamError(
                    f"the answer of {self._url} is more than {MAX_LINE_BYTES // (1024 * 1024)} "
                    "MiB (the longest message hermes reads); it was not read"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _bound(response: httpx2.Response) -> None:
    kind = response.headers.get("content-type", "").lower()
    if not kind.startswith("application/json") or not isinstance(
        response.stream, httpx2.AsyncByteStream
    ):
        return
    encoding = response.headers.get("content-encoding", "").strip().lower()
    url = str(response.request.url)
    response.stream = _BoundedAnswer(
        response.stream, url, "" if encoding == "identity" else encoding
    )


def bound_json_answers(client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    """``client``, asking for uncompressed answers and reading each JSON answer up to
    :data:`~hermes_core._mcp.stdio.MAX_LINE_BYTES` (see the module docstring)."""
    client.headers["accept-encoding"] = "identity"
    hooks = client.event_hooks
    hooks["response"].append(_bound)
    client.event_hooks = hooks
    return client
