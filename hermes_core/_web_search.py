"""The web search provider contract: what a plugin registered with
``hermes_web_search_providers`` builds, and what the ``web_search`` tool asks of it. The tool
names the provider by ``plugins.entries.web.search_provider``; the bundled ones are ``searxng``
(an instance's JSON API) and ``brave`` (the Brave Search API). The host hands out each provider
as a :class:`CheckedWebSearch`, so what a plugin answers is checked in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hermes_core._errors import HermesError
from hermes_core._shown import shown

__all__ = ["CheckedWebSearch", "WebResult", "WebSearchError", "WebSearchProvider"]


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
