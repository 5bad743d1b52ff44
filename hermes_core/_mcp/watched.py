"""The transport of a connection, watched: its end noticed at once, its ``tools/list``
answers screened, its elicitation capability narrowed to form mode where hermes answers forms.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import anyio
import mcp_types
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.shared.message import SessionMessage

from hermes_core._mcp.elicitation import declared_form_only
from hermes_core._mcp.listing import ListingScreen

__all__ = ["WatchedTransport"]


class _WrappedStream:
    """Closing, and ``async with``, of a stream that wraps the transport's ``_inner`` one."""

    _inner: Any

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _WatchedReadStream(_WrappedStream):
    """The transport's read stream, reporting its end (the server went away) to a callback and
    passing each message through the listing screen.

    It delegates every call, so the SDK sees the stream it built; the end of the stream is how
    a dead server is noticed without waiting for the next call, and the screen takes the tools
    the SDK would reject out of a ``tools/list`` answer before the SDK validates it.
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        on_end: Callable[[], None],
        screen: ListingScreen,
    ) -> None:
        self._inner = inner
        self._on_end = on_end
        self._screen = screen

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, when the inner stream carries one."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        return self._screen.received(item)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _WatchedWriteStream(_WrappedStream):
    """The transport's write stream, showing each message the client sends to the listing
    screen (which notes the ``tools/list`` requests)."""

    def __init__(
        self, inner: WriteStream[SessionMessage], screen: ListingScreen, form_only: bool
    ) -> None:
        self._inner = inner
        self._screen = screen
        self._form_only = form_only

    async def send(self, item: SessionMessage, /) -> None:
        self._screen.sent(item)
        message = item.message
        if self._form_only and isinstance(message, mcp_types.JSONRPCRequest):
            narrowed = declared_form_only(message.method, message.params)
            if narrowed is not None:
                answer = message.model_copy(update={"params": narrowed})
                item = dataclasses.replace(item, message=answer)
        await self._inner.send(item)


class WatchedTransport:
    """A transport whose read stream reports its end through ``on_end``, whose
    ``tools/list`` answers go through ``screen``, and which declares the elicitation capability
    as form mode only when ``form_only`` (see :func:`declared_form_only`)."""

    def __init__(
        self,
        inner: Any,
        on_end: Callable[[], None],
        screen: ListingScreen,
        *,
        form_only: bool = False,
    ) -> None:
        self._inner = inner
        self._on_end = on_end
        self._screen = screen
        self._form_only = form_only

    async def __aenter__(self) -> TransportStreams:
        read_stream, write_stream = await self._inner.__aenter__()
        watched: ReadStream[SessionMessage | Exception] = _WatchedReadStream(
            read_stream, self._on_end, self._screen
        )
        writer: WriteStream[SessionMessage] = _WatchedWriteStream(
            write_stream, self._screen, self._form_only
        )
        return watched, writer

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc_val, exc_tb)
        return result
