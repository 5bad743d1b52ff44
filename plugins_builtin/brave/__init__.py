"""The ``brave`` web search provider: the Brave Search API's web search
(``GET https://api.search.brave.com/res/v1/web/search?q=...&count=N`` with the key in the
``X-Subscription-Token`` header; the results are ``web.results[]`` with ``title``, ``url`` and
``description``), for ``web_search`` when ``plugins.entries.web.search_provider`` is ``brave``.

Settings (``plugins.entries.brave``): ``api_key_env`` (``BRAVE_API_KEY``: the variable holding
the key, read from the environment, then ``$HERMES_HOME/.env``), ``endpoint`` (the API's web
search URL), ``timeout`` (15 s).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final

from annotated_types import Ge

from hermes_core._plugin_support import (
    retry_after_seconds,
    secret_variable,
)
from hermes_core.plugin import (
    DoctorCheckSpec,
    DoctorResult,
    Environment,
    PluginContext,
    WebResult,
    WebSearchError,
    WebSearchProviderSpec,
    hookimpl,
)

_NAME: Final = "brave"
ENDPOINT: Final = "https://api.search.brave.com/res/v1/web/search"
MAX_COUNT: Final = 20
"""The most results the API gives in one page."""
_SNIPPET: Final = 600
_TAG = re.compile(r"<[^>]{0,200}>")


@dataclass(frozen=True)
class BraveSettings:
    """What ``plugins.entries.brave`` may set."""

    api_key_env: str = "BRAVE_API_KEY"
    endpoint: str = ENDPOINT
    timeout: Annotated[float, Ge(1)] = 15.0


class Brave:
    """Searches with the Brave Search API."""

    def __init__(self, settings: BraveSettings, env: Environment) -> None:
        self.settings = settings
        self._env = env

    def __repr__(self) -> str:
        return f"Brave(endpoint={self.settings.endpoint!r})"

    async def search(self, query: str, limit: int) -> Sequence[WebResult]:
        """The API's first ``limit`` (at most 20) web results for ``query``."""
        variable = self.settings.api_key_env
        key = secret_variable(self._env, variable)
        if key is None:
            raise WebSearchError(no_key(variable))
        from hermes_core._plugin_support import search_answer  # here: it imports httpx

        response, content = await search_answer(
            "brave",
            "plugins.entries.brave.timeout",
            self.settings.endpoint,
            params={"q": query, "count": str(max(1, min(limit, MAX_COUNT)))},
            headers={"Accept": "application/json", "X-Subscription-Token": key},
            timeout=self.settings.timeout,
        )
        status = response.status_code
        if status in (401, 403):
            raise WebSearchError(f"brave: the key in {variable} was refused (HTTP {status})")
        if status == 429:
            wait = retry_after_seconds(response.headers.get("retry-after"))
            after = f"; try again in {wait:g} s" if wait is not None else ""
            raise WebSearchError(f"brave: too many requests (HTTP 429){after}")
        if status >= 500:
            raise WebSearchError(
                f"brave: the service failed (HTTP {status} {response.reason_phrase}); try again "
                "later"
            )
        if status != 200:
            raise WebSearchError(f"brave: HTTP {status} {response.reason_phrase}")
        try:
            body: Any = json.loads(content)
        except (ValueError, RecursionError):
            raise WebSearchError("brave: the answer is not JSON") from None
        web = body.get("web") if isinstance(body, dict) else None
        found = web.get("results", []) if isinstance(web, dict) else []
        if not isinstance(found, list):
            raise WebSearchError("brave: the answer's web.results is not a list")
        results = [_result(item) for item in found]
        return [result for result in results if result is not None][:limit]


def no_key(variable: str) -> str:
    """What a search says when the variable holding the key is not set."""
    return (
        f"brave: no API key: set {variable} in the environment or in $HERMES_HOME/.env "
        "(a key from https://api-dashboard.search.brave.com)"
    )


def _text(value: object) -> str:
    """A field of the API as plain text: it marks the query's words with ``<strong>``."""
    import html  # imported by the one reading that needs it, not at every start

    return html.unescape(_TAG.sub("", value)) if isinstance(value, str) else ""


def _result(item: object) -> WebResult | None:
    if not isinstance(item, dict) or not isinstance(item.get("url"), str):
        return None
    url = item["url"]
    return WebResult(
        title=_text(item.get("title")) or url,
        url=url,
        snippet=_text(item.get("description"))[:_SNIPPET],
    )


def _factory(context: PluginContext) -> Brave:
    return Brave(context.settings_as(BraveSettings), context.env)


@hookimpl(trylast=True)
def hermes_web_search_providers() -> Sequence[WebSearchProviderSpec]:
    """The ``brave`` provider."""
    return [WebSearchProviderSpec(_NAME, _factory, "the Brave Search API (BRAVE_API_KEY)")]


@hookimpl(trylast=True)
def hermes_doctor_checks(context: PluginContext) -> Sequence[DoctorCheckSpec]:
    """``hermes doctor``, when ``web_search`` uses brave (the ``web`` plugin's
    ``search_provider``): whether the key's variable is set (the key is never shown, and no
    search is made: each costs a request of the plan)."""
    if context.config.plugins.entries.get("web", {}).get("search_provider") != _NAME:
        return []

    def key() -> DoctorResult:
        variable = context.settings_as(BraveSettings).api_key_env
        if secret_variable(context.env, variable) is None:
            return DoctorResult("error", no_key(variable))
        return DoctorResult("ok", f"{variable} is set (never shown)")

    return [DoctorCheckSpec("key", key)]
