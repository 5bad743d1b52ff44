"""Fetching one URL a model gave, under the address rules: every hop of a redirect chain is
checked (``check_url``) and the connection goes to the address that was checked, never to a
second resolution of the name; the body is read in a stream up to a byte cap, and a type
``web_extract`` cannot read is refused before its body is read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Final, Literal

import anyio.to_thread
import httpx

from hermes_core._plugin_support import AddressRefused, check_url

Kind = Literal["html", "text"]

USER_AGENT: Final = "Mozilla/5.0 (compatible; hermes-core web_extract)"
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_HTML: Final = frozenset({"text/html", "application/xhtml+xml"})
_TEXT: Final = frozenset({"text/plain", "text/markdown", "application/json"})
_SNIFF: Final = (b"<!doctype html", b"<html", b"<head", b"<body")


class FetchError(Exception):
    """A URL that could not be read: an HTTP error, a type that is not read, a network failure,
    too many redirects. The message says which and where."""


@dataclass(frozen=True)
class Page:
    """What one URL gave: ``url`` the one asked for, ``final_url`` where the redirects ended,
    ``kind`` how to read ``body`` (``cut`` when it was longer than the cap)."""

    url: str
    final_url: str
    kind: Kind
    content_type: str
    charset: str | None
    body: bytes
    cut: bool
    redirects: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Fetcher:
    """Fetches under the address rules (``allowed_hosts``, named in refusals as ``setting``);
    ``resolve`` replaces ``socket.getaddrinfo`` (the tests map their names with it)."""

    allowed_hosts: Sequence[str]
    setting: str
    timeout: float
    max_bytes: int
    max_redirects: int
    resolve: Callable[[str, int], Sequence[str]] | None = None

    async def fetch(self, url: str) -> Page:
        """The page at ``url``. Raises ``AddressRefused`` for a URL (or a redirect) the rules
        refuse, :class:`FetchError` for everything else that went wrong."""
        current = url
        redirects: list[str] = []
        timeout = httpx.Timeout(self.timeout)
        # No connection is kept for the next hop: the pool keys connections by address, and one
        # made (and its certificate checked) for one name must not serve another name.
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=timeout, limits=limits, trust_env=False) as client:
            while True:
                check = partial(
                    check_url,
                    current,
                    allowed_hosts=self.allowed_hosts,
                    resolve=self.resolve,
                    setting=self.setting,
                )
                addresses = await anyio.to_thread.run_sync(check)
                response = await self._send(client, current, addresses)
                try:
                    location = response.headers.get("location")
                    if response.status_code in _REDIRECTS and location:
                        if len(redirects) >= self.max_redirects:
                            raise FetchError(
                                f"{url}: more than {self.max_redirects} redirects "
                                f"(the last to {location})"
                            )
                        redirects.append(current)
                        current = str(httpx.URL(current).join(location))
                        continue
                    return await self._read(response, url, current, redirects)
                finally:
                    await response.aclose()

    async def _send(
        self, client: httpx.AsyncClient, url: str, addresses: list[str]
    ) -> httpx.Response:
        target = httpx.URL(url)
        headers = {
            "Host": target.netloc.decode("ascii"),
            "User-Agent": USER_AGENT,
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9",
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
                raise FetchError(f"{url}: no answer within {self.timeout:g} s") from None
            except httpx.HTTPError as exc:
                raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from None
        raise FetchError(f"{url}: cannot connect ({', '.join(addresses)}): {failure}")

    async def _read(
        self, response: httpx.Response, url: str, final: str, redirects: list[str]
    ) -> Page:
        if response.status_code >= 400:
            raise FetchError(f"{final}: HTTP {response.status_code} {response.reason_phrase}")
        raw_type = response.headers.get("content-type", "")
        content_type = raw_type.split(";")[0].strip().lower()
        kind = _kind(content_type)
        if content_type and kind is None:
            raise FetchError(
                f"{final}: its content type is {content_type}; web_extract reads HTML, plain "
                "text and JSON only"
            )
        body, cut = await self._body(response, final)
        if kind is None:
            if not body.lstrip()[:20].lower().startswith(_SNIFF):
                raise FetchError(f"{final}: no content type, and the body is not HTML")
            kind = "html"
        return Page(
            url,
            final,
            kind,
            content_type or "text/html",
            response.charset_encoding,
            body,
            cut,
            redirects,
        )

    async def _body(self, response: httpx.Response, final: str) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size >= self.max_bytes:
                    return b"".join(chunks)[: self.max_bytes], True
        except httpx.TimeoutException:
            raise FetchError(
                f"{final}: the body did not arrive within {self.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise FetchError(f"{final}: reading the body: {type(exc).__name__}: {exc}") from None
        return b"".join(chunks), False


def _kind(content_type: str) -> Kind | None:
    if content_type in _HTML:
        return "html"
    if content_type in _TEXT or content_type.endswith("+json"):
        return "text"
    return None


__all__ = ["USER_AGENT", "AddressRefused", "FetchError", "Fetcher", "Page"]
