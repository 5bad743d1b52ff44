"""The ``searxng`` web search provider: a SearXNG instance's JSON API (``GET <url>/search?q=...
&format=json``), for ``web_search`` when ``plugins.entries.web.search_provider`` is
``searxng``.

Settings (``plugins.entries.searxng``): ``url``, the instance's address (required: there is no
public default), ``timeout`` (15 s). The instance must allow the JSON format (its
``settings.yml``: ``search: formats: [html, json]``); one that does not answers 403, and the
error says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final

from annotated_types import Ge

from hermes_core._plugin_support import (
    retry_after_seconds,
    shown_url,
)
from hermes_core.plugin import (
    DoctorCheckSpec,
    DoctorResult,
    PluginContext,
    WebResult,
    WebSearchError,
    WebSearchProviderSpec,
    hookimpl,
)

if TYPE_CHECKING:
    import httpx

_NAME: Final = "searxng"
_SNIPPET: Final = 600
NO_INSTANCE: Final = (
    "searxng: no instance is configured: set plugins.entries.searxng.url to its address "
    "(http://127.0.0.1:8888)"
)


@dataclass(frozen=True)
class SearxngSettings:
    """What ``plugins.entries.searxng`` may set."""

    url: str | None = None
    timeout: Annotated[float, Ge(1)] = 15.0


class Searxng:
    """Searches one SearXNG instance."""

    def __init__(self, settings: SearxngSettings) -> None:
        self.settings = settings

    async def search(self, query: str, limit: int) -> Sequence[WebResult]:
        """The instance's first ``limit`` results for ``query``."""
        base = self.settings.url
        if not base:
            raise WebSearchError(NO_INSTANCE)
        from hermes_core._plugin_support import search_answer  # here: it imports httpx

        shown = shown_url(base)
        response, content = await search_answer(
            f"searxng at {shown}",
            "plugins.entries.searxng.timeout",
            base.rstrip("/") + "/search",
            params={"q": query, "format": "json", "pageno": "1"},
            timeout=self.settings.timeout,
        )
        if response.status_code == 403:
            raise WebSearchError(
                f"searxng at {shown} refuses the JSON format (HTTP 403): add json to "
                "search.formats in the instance's settings.yml"
            )
        if response.status_code != 200:
            raise WebSearchError(_failure(shown, response))
        try:
            body: Any = json.loads(content)
        except (ValueError, RecursionError):
            raise WebSearchError(f"searxng at {shown} did not answer JSON") from None
        found = body.get("results") if isinstance(body, dict) else None
        if not isinstance(found, list):
            raise WebSearchError(f"searxng at {shown}: the answer has no results list")
        results = [_result(item) for item in found]
        return [result for result in results if result is not None][:limit]


def _failure(shown: str, response: httpx.Response) -> str:
    """What an answer other than 200 (and 403) means, and what to do about it."""
    status = response.status_code
    code = f"HTTP {status} {response.reason_phrase}".rstrip()
    if status == 429:
        wait = retry_after_seconds(response.headers.get("retry-after"))
        when = f"in {wait:g} s" if wait is not None else "later"
        return (
            f"searxng at {shown} is limiting requests (HTTP 429); try again {when}, or let this "
            "machine pass the instance's limiter (pass_ip in its limiter.toml)"
        )
    if status >= 500:
        return f"searxng at {shown} failed ({code}); try again later, or check the instance"
    return (
        f"searxng at {shown}: {code}: is plugins.entries.searxng.url the address of a SearXNG "
        "instance?"
    )


def _result(item: object) -> WebResult | None:
    if not isinstance(item, dict):
        return None
    url, title, content = item.get("url"), item.get("title"), item.get("content")
    if not isinstance(url, str) or not url:
        return None
    return WebResult(
        title=title if isinstance(title, str) else url,
        url=url,
        snippet=(content if isinstance(content, str) else "")[:_SNIPPET],
    )


def _factory(context: PluginContext) -> Searxng:
    return Searxng(context.settings_as(SearxngSettings))


@hookimpl(trylast=True)
def hermes_web_search_providers() -> Sequence[WebSearchProviderSpec]:
    """The ``searxng`` provider."""
    return [WebSearchProviderSpec(_NAME, _factory, "a SearXNG instance's JSON API")]


@hookimpl(trylast=True)
def hermes_doctor_checks(context: PluginContext) -> Sequence[DoctorCheckSpec]:
    """``hermes doctor``, when ``web_search`` uses searxng (the ``web`` plugin's
    ``search_provider``): whether an instance is set, and (unless ``--offline``) whether it
    answers a search as ``web_search`` asks it."""
    if context.config.plugins.entries.get("web", {}).get("search_provider") != _NAME:
        return []

    def url() -> DoctorResult:
        base = context.settings_as(SearxngSettings).url
        if not base:
            return DoctorResult("error", NO_INSTANCE)
        return DoctorResult("ok", f"plugins.entries.searxng.url is {base}")

    async def instance() -> DoctorResult:
        settings = context.settings_as(SearxngSettings)
        if not settings.url:
            return DoctorResult("not checked", "no instance to ask (plugins.entries.searxng.url)")
        try:
            found = await Searxng(settings).search("hermes", 1)
        except WebSearchError as exc:
            return DoctorResult("error", str(exc))
        return DoctorResult("ok", f"{settings.url} answered a search ({len(found)} results)")

    return [DoctorCheckSpec("url", url), DoctorCheckSpec("instance", instance, network=True)]
