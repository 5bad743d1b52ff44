"""The web search provider contract: what a plugin registered with
``hermes_web_search_providers`` builds, and what the ``web_search`` tool asks of it. The tool
names the provider by ``plugins.entries.web.search_provider``; the bundled ones are ``searxng``
(an instance's JSON API) and ``brave`` (the Brave Search API). The host hands out each provider
as a :class:`CheckedWebSearch`, so what a plugin answers is checked in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from hermes_core._errors import HermesError
from hermes_core._shown import shown

if TYPE_CHECKING:
    import httpx

__all__ = [
    "SEARCH_ANSWER_BYTES",
    "CheckedWebSearch",
    "WebResult",
    "WebSearchError",
    "WebSearchProvider",
    "search_answer",
]


@dataclass(frozen=True)
class WebResult:
    """One result of a web search: its ``title``, ``url`` and a ``snippet`` of its text."""

    title: str
    url: str
    snippet: str = ""


class WebSearchError(HermesError):
    """A search the provider could not make: no key, a refused key, the service's error. The
    message says which, naming the provider (and the variable of a missing key)."""


@runtime_checkable
class WebSearchProvider(Protocol):
    """A web search service, built by its plugin's factory for each search."""

    async def search(self, query: str, limit: int) -> Sequence[WebResult]:
        """At most ``limit`` results for ``query``, best first; raises
        :class:`WebSearchError` when the service cannot answer."""
        ...


class CheckedWebSearch:
    """``provider`` as the host hands it out: an exception other than :class:`WebSearchError`,
    or an answer that is no list of :class:`WebResult` with text fields, is a
    :class:`WebSearchError` naming it (``label``: ``web search provider 'x' (plugin 'y')``)."""

    def __init__(self, provider: WebSearchProvider, label: str) -> None:
        self.provider = provider
        self.label = label

    async def search(self, query: str, limit: int) -> list[WebResult]:
        """The provider's results for ``query``, checked."""
        try:
            found: object = await self.provider.search(query, limit)
        except WebSearchError:
            raise
        except Exception as exc:
            raise WebSearchError(
                f"{self.label} failed: search raised {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(found, list | tuple):
            got = f"{type(found).__name__} {shown(found)}"
            raise WebSearchError(f"{self.label} search returned {got}, not a list of WebResult")
        for result in found:
            if not isinstance(result, WebResult):
                got = f"a list holding {type(result).__name__}"
                raise WebSearchError(f"{self.label} search returned {got}, not WebResult")
            fields = {"title": result.title, "url": result.url, "snippet": result.snippet}
            wrong = [f"{k} is {shown(v)}" for k, v in fields.items() if not isinstance(v, str)]
            if wrong:
                raise WebSearchError(
                    f"{self.label} search returned a WebResult whose {', '.join(wrong)}, not text"
                )
        return list(found)


SEARCH_ANSWER_BYTES: Final = 8 << 20
"""The longest answer of a web search provider read (8 MiB; one is tens of KB): a longer one is
refused as it passes."""


async def search_answer(
    who: str,
    setting: str,
    url: str,
    *,
    params: dict[str, str],
    headers: dict[str, str] | None = None,
    timeout: float,
) -> tuple[httpx.Response, bytes]:
    """A web search provider's answer to a GET of ``url``: the response and its body, read as
    it comes (expanded from the codings it asks for, gzip and deflate) and whole within ``timeout``
    seconds (``httpx``'s timeout bounds each read only), at most :data:`SEARCH_ANSWER_BYTES`.
    Each failure is a :class:`WebSearchError` naming ``who`` (``brave``,
    ``searxng at URL``): no whole answer in time (naming ``setting``, the timeout's key), a
    certificate not trusted, another HTTP error, too long an answer. The status is the
    caller's to read."""
    import anyio  # here: a host that never searches never imports httpx
    import httpx

    from hermes_core._checked_fetch import ACCEPT_ENCODING, read_capped
    from hermes_core._tls import tls_context, untrusted_certificate

    sent = {"Accept-Encoding": ACCEPT_ENCODING, **(headers or {})}
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=tls_context()) as client:
            with anyio.fail_after(timeout):
                async with client.stream("GET", url, params=params, headers=sent) as response:
                    content = await read_capped(response, SEARCH_ANSWER_BYTES)
    except TimeoutError:
        raise WebSearchError(f"{who}: no whole answer within {timeout:g} s ({setting})") from None
    except httpx.HTTPError as exc:
        said = untrusted_certificate(exc) or f"{type(exc).__name__}: {exc}"
        raise WebSearchError(f"{who}: {said}") from None
    if content is None:
        raise WebSearchError(
            f"{who} answered more than {SEARCH_ANSWER_BYTES >> 20} MiB, the most a search "
            "answer may hold: not read"
        )
    return response, content
