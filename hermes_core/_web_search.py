"""The web search provider contract: what a plugin registered with
``hermes_web_search_providers`` builds, and what the ``web_search`` tool asks of it. The tool
names the provider by ``plugins.entries.web.search_provider``; the bundled ones are ``searxng``
(an instance's JSON API) and ``brave`` (the Brave Search API)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hermes_core._errors import HermesError

__all__ = ["WebResult", "WebSearchError", "WebSearchProvider"]


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
