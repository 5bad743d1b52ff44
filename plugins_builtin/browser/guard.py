"""The address rules on everything a session's browser fetches: a forward proxy of its own.

Chromium is launched with this proxy for every address, loopback included, so each request a
page makes (the navigation, each redirect, images, scripts, fetches, WebSockets, service
workers) reaches :class:`AddressProxy` first. The proxy asks the same rule as ``web_extract``
(``resolve``: loopback, link-local, private and metadata addresses are refused after DNS
resolution unless the host is allowed) and connects to an address that rule checked, so a
name that resolves differently a moment later (DNS rebinding) gains nothing. A refused plain
HTTP request gets a ``403`` marked with :data:`REFUSED_HEADER`; a refused tunnel (``https``,
``ws``, ``wss``) gets a ``403`` to its ``CONNECT``, said as a connection to its ``host:port``
(the proxy cannot tell which of them it carries). Each refusal is kept by ``host:port``
(:attr:`AddressProxy.refusals`): Chromium's own background requests come through the proxy
too, so the browser notes a refusal for the model only when a page's request fails on it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from urllib.parse import SplitResult, urlsplit

import anyio

__all__ = [
    "REFUSED_HEADER",
    "AddressProxy",
    "Refused",
    "Resolve",
    "origin_key",
    "scheme_refusal",
    "url_key",
]

REFUSED_HEADER = "X-Hermes-Refused"


class Refused(Exception):
    """An address the rules refuse; the message says which and why. ``unresolved``: its name
    did not resolve, a lookup failure no allowed host mends rather than a refusal."""

    def __init__(self, message: str, *, unresolved: bool = False) -> None:
        super().__init__(message)
        self.unresolved = unresolved


Resolve = Callable[[str], list[str]]
"""The address rule: the addresses ``url``'s host may be reached at (empty: connect by name,
an allowed host), or :class:`Refused`. Blocking (it resolves names): run in a worker thread."""

_HEAD_LIMIT = 64 * 1024
_CONNECT_SECONDS = 30.0
_HEAD_SECONDS = 60.0
_COPY_CHUNK = 64 * 1024
_HOP_HEADERS = frozenset({"connection", "proxy-connection", "keep-alive", "proxy-authorization"})


def scheme_refusal(url: str) -> str | None:
    """Why ``url`` is not a web address the browser may open (``file:``, ``chrome:``...)."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"{_shown(url)} is not a valid address ({exc})"
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        scheme = parts.scheme or "missing"
        return f"{_shown(url)}: only http and https addresses are opened (the scheme is {scheme!r})"
    return None


class AddressProxy:
    """A forward HTTP proxy on 127.0.0.1 that lets through only what ``resolve`` allows."""

    def __init__(self, resolve: Resolve) -> None:
        self._resolve = resolve
        self.refusals: dict[str, str] = {}
        """Why each refused ``host:port`` was refused (the latest reason)."""
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        """Listen on a free port of 127.0.0.1; the proxy's address."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=_HEAD_LIMIT)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        """Stop listening and drop every connection still open."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(BaseException):
                await task
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            # close() (or the loop's end) stopped this connection, and nothing awaits its task
            # but close(). It ends normally: on a cancelled task, the done callback of
            # asyncio.start_server (Python 3.11) raises in task.exception(), which the loop
            # prints as a traceback at the end of every session with a request still open.
            pass
        finally:
            self._connections.discard(task)
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_SECONDS)
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, version = request_line.split(" ", 2)
        tunnel = method.upper() == "CONNECT"
        url = f"https://{target}/" if tunnel else target
        host, port = None, 0
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
            if not host or parts.scheme not in ("http", "https"):
                raise Refused(f"{_shown(target)} is not an http address")
            addresses = await anyio.to_thread.run_sync(self._resolve, url)
        except Refused as exc:
            reason = str(exc)
            if tunnel:  # https, or a WebSocket (ws, wss): a connection, its scheme unknown
                said = f"refused to fetch {url}"
                reason = reason.replace(said, f"refused a connection to {target}", 1)
            self.refusals[origin_key(host or target, port)] = reason
            await _answer(writer, 403, f"hermes refused this address: {reason}", refused=True)
            return
        upstream = await _connect(addresses or [host], port)
        if upstream is None:
            await _answer(writer, 502, f"cannot connect to {host}:{port}")
            return
        up_reader, up_writer = upstream
        try:
            if tunnel:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))
            else:
                up_writer.write(_origin_form(method, parts, version, header_lines))
                await _one_request(reader, writer, up_reader, up_writer, header_lines)
        finally:
            up_writer.close()


async def _connect(
    addresses: list[str], port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    for address in addresses:
        try:
            return await asyncio.wait_for(asyncio.open_connection(address, port), _CONNECT_SECONDS)
        except (OSError, TimeoutError):
            continue
    return None


def _origin_form(method: str, parts: SplitResult, version: str, header_lines: list[str]) -> bytes:
    """The request as the origin server expects it: its path, without the hop-by-hop headers,
    asking to close the connection (the next request on Chromium's proxy connection may be for
    another host, which must be checked in turn)."""
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    lines = [f"{method} {path} {version}", *_end_to_end(header_lines), "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1")


async def _one_request(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
    header_lines: list[str],
) -> None:
    """One plain-HTTP request and its answer, nothing more on this connection: the request's
    body goes to the origin, the answer comes back told ``Connection: close``, and whatever
    the client sends after that is dropped. An origin may ignore the ``Connection: close`` it
    was sent; passed on as it was, its keep-alive would let Chromium send its next request,
    perhaps for another host, down this connection to this origin, unchecked. An answer that
    switches protocols (``101``) keeps the connection both ways, as a tunnel does."""
    length = _body_length(header_lines)
    decided: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    async def request_side() -> None:
        await _copy_exactly(reader, up_writer, length)
        if await decided:
            await _copy(reader, up_writer)
            return
        while await reader.read(_COPY_CHUNK):
            pass  # a second request on this connection: never sent anywhere
        up_writer.close()

    async def answer_side() -> None:
        switched = False
        try:
            switched = await _answer_heads(up_reader, writer)
        finally:
            if not decided.done():
                decided.set_result(switched)
        await _copy(up_reader, writer)

    await asyncio.gather(request_side(), answer_side())


def _body_length(header_lines: list[str]) -> int:
    for line in header_lines:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            return int(value.strip())
    return 0  # Chromium sends request bodies with a length over HTTP/1.1


async def _copy_exactly(
    source: asyncio.StreamReader, sink: asyncio.StreamWriter, size: int
) -> None:
    while size > 0:
        chunk = await source.read(min(size, _COPY_CHUNK))
        if not chunk:
            return
        size -= len(chunk)
        sink.write(chunk)
        await sink.drain()


async def _answer_heads(up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """The origin's answer heads passed on without their hop-by-hop headers, the final one
    told ``Connection: close`` (interim ``1xx`` heads come first); whether the answer switched
    protocols (``101``). No deadline: a page may wait on a slow answer (a long poll)."""
    while True:
        head = await up_reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = status_line.split(" ", 2)[1] if " " in status_line else ""
        if status == "101":
            writer.write(head)
            await writer.drain()
            return True
        interim = len(status) == 3 and status.startswith("1")
        closing = [] if interim else ["Connection: close"]
        lines = [status_line, *_end_to_end(header_lines), *closing, "", ""]
        writer.write("\r\n".join(lines).encode("latin-1"))
        await writer.drain()
        if not interim:
            return False


def _end_to_end(header_lines: list[str]) -> list[str]:
    """The header lines of a message without the hop-by-hop ones (this proxy sets its own)."""
    return [
        line
        for line in header_lines
        if line and line.split(":", 1)[0].strip().lower() not in _HOP_HEADERS
    ]


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(_COPY_CHUNK):
            sink.write(chunk)
            await sink.drain()
    finally:
        with contextlib.suppress(OSError):
            if sink.can_write_eof():
                sink.write_eof()


async def _answer(
    writer: asyncio.StreamWriter, status: int, text: str, *, refused: bool = False
) -> None:
    body = text.encode()
    reason = {403: "Forbidden", 502: "Bad Gateway"}[status]
    marker = f"{REFUSED_HEADER}: 1\r\n" if refused else ""
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n{marker}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()


def origin_key(host: str, port: int) -> str:
    """The key of :attr:`AddressProxy.refusals` for ``host`` and ``port``."""
    return f"{host.lower().strip('[]')}:{port}"


def url_key(url: str) -> str:
    """The key of :attr:`AddressProxy.refusals` for a request's ``url``."""
    try:
        parts = urlsplit(url)
        default = 443 if parts.scheme in ("https", "wss") else 80
        return origin_key(parts.hostname or "", parts.port or default)
    except ValueError:
        return ""


def _shown(url: str) -> str:
    return url if len(url) <= 200 else url[:200] + "…"
