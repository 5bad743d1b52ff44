"""Fetching one page a model gave, under the address rules: hermes' checked fetch (every hop
checked, the connection made to the checked address, the body capped) with ``web_extract``'s
rule of types: HTML, plain text and JSON; any other type is refused before its body is read, and
a body without a type is read as HTML only when it looks like HTML."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from hermes_core._plugin_support import AddressRefused, CheckedFetcher, FetchError

Kind = Literal["html", "text"]

_ACCEPT: Final = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9"
_HTML: Final = frozenset({"text/html", "application/xhtml+xml"})
_TEXT: Final = frozenset({"text/plain", "text/markdown", "application/json"})
_SNIFF: Final = (b"<!doctype html", b"<html", b"<head", b"<body")


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
    """Fetches pages under the address rules (``allowed_hosts``, named in refusals as
    ``setting``); a request past ``timeout`` names ``timeout_setting``; ``resolve`` replaces
    ``socket.getaddrinfo`` (the tests map their names with it)."""

    allowed_hosts: Sequence[str]
    setting: str
    timeout: float
    max_bytes: int
    max_redirects: int
    resolve: Callable[[str, int], Sequence[str]] | None = None
    timeout_setting: str = ""

    async def fetch(self, url: str) -> Page:
        """The page at ``url``. Raises ``AddressRefused`` for a URL (or a redirect) the rules
        refuse, ``FetchError`` for everything else that went wrong."""
        fetcher = CheckedFetcher(
            self.allowed_hosts,
            self.setting,
            self.timeout,
            self.max_bytes,
            self.max_redirects,
            accept=_ACCEPT,
            resolve=self.resolve,
            timeout_setting=self.timeout_setting,
        )
        got = await fetcher.fetch(url, _refusal)
        kind = _kind(got.content_type)
        if kind is None:
            if not got.body.lstrip()[:20].lower().startswith(_SNIFF):
                raise FetchError(f"{got.final_url}: no content type, and the body is not HTML")
            kind = "html"
        return Page(
            got.url,
            got.final_url,
            kind,
            got.content_type or "text/html",
            got.charset,
            got.body,
            got.cut,
            got.redirects,
        )


def _refusal(content_type: str) -> str | None:
    if content_type and _kind(content_type) is None:
        from hermes_core._plugin_support import readers_of

        return (
            f"its content type is {content_type}; web_extract reads HTML, plain text and JSON "
            f"only: {readers_of(content_type)}"
        )
    return None


def _kind(content_type: str) -> Kind | None:
    if content_type in _HTML:
        return "html"
    if content_type in _TEXT or content_type.endswith("+json"):
        return "text"
    return None


__all__ = ["AddressRefused", "FetchError", "Fetcher", "Page"]
