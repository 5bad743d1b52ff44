"""The ``web_search`` tool: a query through the web search provider
``plugins.entries.web.search_provider`` names (a plugin kind: ``hermes_web_search_providers``;
bundled: ``searxng``, ``brave``), its results as title / URL / snippet."""

from __future__ import annotations

import re
from typing import Any, Final
from urllib.parse import quote

from hermes_core import HermesError
from hermes_core.plugin import (
    PluginContext,
    Tool,
    ToolAnnotations,
    ToolResult,
    WebResult,
    WebSearchError,
)

_TITLE: Final = 300
_SNIPPET: Final = 600
_URL: Final = 2048
_BREAKS: Final = re.compile(r"[\s\x00-\x1f\x7f]")
"""What no URL holds and a line of the list must not: each is percent-encoded in a URL."""
NO_PROVIDER: Final = (
    "web_search has no search provider: the user sets plugins.entries.web.search_provider to "
    "searxng (with plugins.entries.searxng.url) or brave (with BRAVE_API_KEY), see docs/web.md"
)


class WebSearch:
    """The ``web_search`` handler over the provider named ``provider``, built by ``context``
    (the one the host gave ``hermes_tools``) at each search."""

    def __init__(self, context: PluginContext, provider: str | None, max_results: int) -> None:
        self.context = context
        self.provider = provider
        self.max_results = max_results

    async def __call__(self, query: str, limit: int = 5) -> ToolResult:
        """At most ``limit`` results for ``query``."""
        if not self.provider:
            return ToolResult.error("NOT_AVAILABLE", NO_PROVIDER)
        try:
            provider = self.context.web_search_provider(self.provider)
        except HermesError as exc:
            # An unknown name (listing the valid ones), a plugin that did not load or failed:
            # the configuration's to mend, as image_generate says of its provider.
            return ToolResult.error("CONFIG_ERROR", f"web_search: {exc}")
        wanted = max(1, min(limit, self.max_results))
        try:
            found = await provider.search(query, wanted)
        except WebSearchError as exc:
            return ToolResult.error("TOOL_ERROR", str(exc))
        results = [_bounded(r) for r in list(found)[:wanted] if isinstance(r, WebResult)]
        structured: dict[str, Any] = {
            "query": query,
            "provider": self.provider,
            "results": [{"title": r.title, "url": r.url, "snippet": r.snippet} for r in results],
        }
        if not results:
            return ToolResult.text(f"No results for {query!r}.", structured=structured)
        lines = []
        for number, result in enumerate(results, 1):
            lines.append(f"{number}. {result.title}\n   {result.url}")
            if result.snippet:
                lines.append(f"   {result.snippet}")
        return ToolResult.text("\n".join(lines), structured=structured)


def _bounded(result: WebResult) -> WebResult:
    """A provider's result cut to sizes a model should read (a provider is a plugin)."""
    from hermes_core._plugin_support import shortened  # here: a listing never loads it

    return WebResult(
        title=shortened(" ".join(str(result.title).split()), _TITLE),
        url=_address(str(result.url)),
        snippet=shortened(" ".join(str(result.snippet).split()), _SNIPPET),
    )


def _address(url: str) -> str:
    """``url`` with what no URL holds percent-encoded, cut at 2,048 characters (not inside an
    escape) with ``...``: a cut address is not taken for a whole one."""
    encoded = _BREAKS.sub(lambda found: quote(found.group()), url)
    if len(encoded) <= _URL:
        return encoded
    cut = encoded[:_URL]
    escape = cut.rfind("%", _URL - 2)
    return (cut[:escape] if escape >= 0 else cut) + "..."


def web_search_tool(
    context: PluginContext, provider: str | None, max_results: int, source: str
) -> Tool:
    """The ``web_search`` tool."""
    return Tool(
        name="web_search",
        description=(
            "Search the web. Returns results as title, URL and snippet; read a page with "
            "web_extract."
        ),
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 2000},
                "limit": {"type": "integer", "minimum": 1, "maximum": max_results, "default": 5},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        handler=WebSearch(context, provider, max_results),
        toolset=source,
        source="builtin",
        source_name=source,
        annotations=ToolAnnotations(
            read_only=True, destructive=False, idempotent=True, open_world=True
        ),
        timeout=60.0,
        core=True,
    )
