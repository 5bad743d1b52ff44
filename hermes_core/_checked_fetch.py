"""GET one URL a model named, under the address rules (:mod:`hermes_core._addresses`): every
hop of a redirect chain is checked (``check_url``) and the connection goes to the address that
was checked, never to a second resolution of the name; a type the caller cannot use is refused
before the body is read, and the body is read in a stream up to a byte cap; each request (each
hop) has the timeout in all, however slowly its answer drips. What ``web_extract`` reads pages
with and ``vision_analyze`` reads images with.

A body that comes compressed (gzip or deflate, :data:`ACCEPT_ENCODING`) is expanded here, at
most a megabyte a step (:mod:`hermes_core._expanding`), and the cap holds for what it expands
to and for the bytes as sent: httpx would expand each chunk of the network whole, and a chain
of codings in one step, so a few kilobytes of gzip inside gzip would be gigabytes in memory
before any cap is looked at. Another coding, or more than one, is refused by name before the
body is read."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Final

import anyio
import anyio.to_thread
import httpx

from hermes_core._addresses import check_url
from hermes_core._errors import HermesError
from hermes_core._expanding import WINDOW_BITS, Expander, ExpandError, content_codings
from hermes_core._tls import tls_context

__all__ = [
    "ACCEPT_ENCODING",
    "USER_AGENT",
    "CheckedFetcher",
    "FetchError",
    "Fetched",
    "read_capped",
    "readers_of",
]

USER_AGENT: Final = "Mozilla/5.0 (compatible; hermes-core)"
ACCEPT_ENCODING: Final = "gzip, deflate"
"""The content codings hermes asks for: the ones it expands itself, a step at a time (httpx
would ask for brotli and zstd too when their packages are installed)."""
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


def readers_of(content_type: str) -> str:
    """What can read an address of ``content_type`` that is no web page (a PDF, an image),
    said for a model: the one wording of ``web_extract``'s refusal and ``browser_navigate``'s
    note."""
    kind = content_type.split(";")[0].strip().lower()
    if kind.startswith("image/"):
        return "vision_analyze reads an image at its address (PNG, JPEG, GIF or WebP)"
    if kind == "application/pdf":
        return (
            "no hermes tool reads a PDF's text; a command can, where the terminal tool is "
            "enabled and a PDF reader is installed (curl -sL URL | pdftotext - -)"
        )
    return "no hermes tool reads it"


class FetchError(HermesError):
    """A URL that could not be read: an HTTP error, a type the caller does not read, a network
    failure, too many redirects. The message says which and where."""


@dataclass(frozen=True)
class Fetched:
    """What one URL gave: ``url`` the one asked for, ``final_url`` where the redirects ended,
    its content type (lower case, no parameters; ``""`` when the server sent none), ``body``
    (``cut`` when it was longer than the cap) and the addresses it was redirected from."""

    url: str
    final_url: str
    content_type: str
    charset: str | None
    body: bytes = field(repr=False)
    cut: bool
    redirects: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CheckedFetcher:
    """Fetches under the address rules (``allowed_hosts``, named in refusals as ``setting``),
    asking with the ``Accept`` header ``accept``; a request past ``timeout`` names
    ``timeout_setting`` when given; ``resolve`` replaces ``socket.getaddrinfo`` (tests map
    their names with it)."""

    allowed_hosts: Sequence[str]
    setting: str
    timeout: float
    max_bytes: int
    max_redirects: int
    accept: str = "*/*"
    resolve: Callable[[str, int], Sequence[str]] | None = None
    timeout_setting: str = ""

    def _within(self) -> str:
        named = f" ({self.timeout_setting})" if self.timeout_setting else ""
        return f"within {self.timeout:g} s{named}"

    async def fetch(self, url: str, refuse: Callable[[str], str | None]) -> Fetched:
        """The body at ``url``. ``refuse(content_type)`` says why a type cannot be used (its
        refusal is raised before the body is read) or ``None``. Raises
        :class:`~hermes_core._addresses.AddressRefused` for a URL (or a redirect) the rules
        refuse, :class:`FetchError` for everything else that went wrong."""
        current = url
        redirects: list[str] = []
        timeout = httpx.Timeout(self.timeout)
        # No connection is kept for the next hop: the pool keys connections by address, and one
        # made (and its certificate checked) for one name must not serve another name.
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(
            timeout=timeout, limits=limits, trust_env=False, verify=tls_context(trust_env=False)
        ) as client:
            while True:
                check = partial(
                    check_url,
                    current,
                    allowed_hosts=self.allowed_hosts,
                    resolve=self.resolve,
                    setting=self.setting,
                )
                addresses = await anyio.to_thread.run_sync(check)
                # httpx's timeout bounds each read, so a server sending a byte now and then
                # would hold the call for ever: the whole request has the timeout, in all.
                try:
                    with anyio.fail_after(self.timeout):
                        hop = await self._hop(client, url, current, addresses, redirects, refuse)
                except TimeoutError:
                    raise FetchError(
                        f"{current}: the answer did not arrive whole {self._within()}"
                    ) from None
                if isinstance(hop, Fetched):
                    return hop
                redirects.append(current)
                current = hop

    async def _hop(
        self,
        client: httpx.AsyncClient,
        url: str,
        current: str,
        addresses: list[str],
        redirects: list[str],
        refuse: Callable[[str], str | None],
    ) -> Fetched | str:
        """One request: what ``current`` gave, or the URL it redirects to."""
        response = await self._send(client, current, addresses)
        try:
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                target = str(httpx.URL(current).join(location))
                if len(redirects) >= self.max_redirects:
                    raise FetchError(
                        f"{url}: more than {self.max_redirects} redirects (the last to {target})"
                    )
                return target
            return await self._read(response, url, current, redirects, refuse)
        finally:
            with anyio.CancelScope(shield=True):  # closed even when the deadline cut it short
                await response.aclose()

    async def _send(
        self, client: httpx.AsyncClient, url: str, addresses: list[str]
    ) -> httpx.Response:
        target = httpx.URL(url)
        headers = {
            "Host": target.netloc.decode("ascii"),
            "User-Agent": USER_AGENT,
            "Accept": self.accept,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        # The certificate is checked against the name, the connection made to the address.
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        failure: Exception | None = None
        for address in addresses:
            request = client.build_request(
                "GET", target.copy_with(host=address), headers=headers, extensions=extensions
            )
            try:
                return await client.send(request, stream=True)
            except httpx.ConnectError as exc:
                failure = exc
            except httpx.TimeoutException:
                raise FetchError(f"{url}: no answer {self._within()}") from None
            except httpx.HTTPError as exc:
                raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from None
        raise FetchError(f"{url}: cannot connect ({', '.join(addresses)}): {failure}")

    async def _read(
        self,
        response: httpx.Response,
        url: str,
        final: str,
        redirects: list[str],
        refuse: Callable[[str], str | None],
    ) -> Fetched:
        if response.status_code >= 400:
            raise FetchError(f"{final}: HTTP {response.status_code} {response.reason_phrase}")
        raw_type = response.headers.get("content-type", "")
        content_type = raw_type.split(";")[0].strip().lower()
        refusal = refuse(content_type)
        if refusal is not None:
            raise FetchError(f"{final}: {refusal}")
        body, cut = await self._body(response, final)
        return Fetched(url, final, content_type, response.charset_encoding, body, cut, redirects)

    async def _body(self, response: httpx.Response, final: str) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        try:
            async for piece, sent in expanded(response):
                chunks.append(piece)
                size += len(piece)
                if size >= self.max_bytes or sent >= self.max_bytes:
                    return b"".join(chunks)[: self.max_bytes], True
        except httpx.TimeoutException:
            raise FetchError(f"{final}: the body did not arrive {self._within()}") from None
        except httpx.HTTPError as exc:
            raise FetchError(f"{final}: reading the body: {type(exc).__name__}: {exc}") from None
        return b"".join(chunks), False


async def read_capped(response: httpx.Response, cap: int) -> bytes | None:
    """The body of ``response`` read as it comes, or ``None`` as soon as it (or the length it
    announces) passes ``cap`` bytes, as sent or as it expands to: an answer is refused at a
    cap, never held whole first. A coding hermes does not expand raises
    ``httpx.DecodingError``."""
    announced = response.headers.get("content-length", "")
    if announced.isdigit() and int(announced) > cap:
        return None
    body = bytearray()
    async for piece, sent in expanded(response):
        body += piece
        if len(body) > cap or sent > cap:
            return None
    return bytes(body)


async def expanded(response: httpx.Response) -> AsyncIterator[tuple[bytes, int]]:
    """The body of ``response``, expanded from gzip or deflate when it comes so, in pieces of
    at most :data:`~hermes_core._expanding.PIECE` bytes, each with the bytes read as sent so
    far: the caller stops at its cap, having held at most a piece more. A coding hermes does not
    expand (or a chain of codings), and data that does not expand, raise
    ``httpx.DecodingError``."""
    codings = content_codings(response.headers)
    if codings and (len(codings) > 1 or codings[0] not in WINDOW_BITS):
        raise httpx.DecodingError(
            f"the answer's content encoding is {', '.join(codings)!r}; hermes asks for "
            f"{ACCEPT_ENCODING!r} and reads one of them or none",
            request=response.request,
        )
    expander = Expander(codings[0]) if codings else None
    sent = 0
    try:
        async for chunk in response.aiter_raw():
            sent += len(chunk)
            for piece in expander.pieces(chunk) if expander is not None else (chunk,):
                yield piece, sent
        if expander is not None and (rest := expander.flush()):
            yield rest, sent
    except ExpandError as exc:
        raise httpx.DecodingError(
            f"the answer's {codings[0]} data does not expand: {exc.detail or exc.kind}",
            request=response.request,
        ) from None
