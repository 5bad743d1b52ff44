"""The ``web`` toolset: ``web_extract`` (the main text of web pages) and ``web_search`` (a web
search through the provider ``plugins.entries.web.search_provider`` names), both core tools.

``web_extract`` fetches each URL with httpx under the address rules (docs/security.md: no
loopback, private, link-local or metadata address unless ``allowed_hosts`` allows the host,
checked on every redirect, the connection made to the checked address), reads at most
``max_bytes`` of the body, and returns the main text (trafilatura: the extra
``hermes-core-agent[web]``) as markdown with the title, at most ``max_chars`` characters per URL.

Settings (``plugins.entries.web``): ``allowed_hosts`` (``[]``), ``search_provider`` (none),
``max_chars`` (20000), ``max_bytes`` (2000000), ``timeout`` (20 s per request),
``max_redirects`` (5), ``max_results`` (10). docs/web.md says more.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final

import anyio
from annotated_types import Ge, Le

from hermes_core._plugin_support import AddressRefused, AddressSettings
from hermes_core.plugin import (
    DoctorCheckSpec,
    DoctorResult,
    PluginContext,
    Tool,
    ToolAnnotations,
    ToolResult,
    hookimpl,
)

from .search import web_search_tool

if TYPE_CHECKING:
    from .fetch import Fetcher

_PLUGIN: Final = "web"
EXTRACTION_MISSING: Final = (
    "web_extract cannot read pages: trafilatura is not installed: "
    "pip install 'hermes-core-agent[web]' (docs/web.md); web_search does not need it"
)
_SETTING: Final = "plugins.entries.web.allowed_hosts"
MAX_URLS: Final = 5


@dataclass(frozen=True)
class WebSettings(AddressSettings):
    """What ``plugins.entries.web`` may set (checked by ``PluginContext.settings_as``)."""

    search_provider: str | None = None
    max_chars: Annotated[int, Ge(500)] = 20_000
    max_bytes: Annotated[int, Ge(1024)] = 2_000_000
    timeout: Annotated[float, Ge(1), Le(300)] = 20.0
    max_redirects: Annotated[int, Ge(0), Le(20)] = 5
    max_results: Annotated[int, Ge(1), Le(50)] = 10


class WebExtract:
    """The ``web_extract`` handler over one :class:`~.fetch.Fetcher` (``None``: the one
    ``settings`` describe, made at the first call, so httpx is imported only then)."""

    def __init__(self, settings: WebSettings, fetcher: Fetcher | None = None) -> None:
        self.settings = settings
        self.fetcher = fetcher

    async def __call__(self, urls: list[str]) -> ToolResult:
        """The main text of each of ``urls``, fetched at the same time."""
        from .fetch import FetchError

        if self.fetcher is None:
            self.fetcher = fetcher_of(self.settings)
        fetcher = self.fetcher
        parts: list[str] = [""] * len(urls)
        records: list[dict[str, Any]] = [{} for _ in urls]
        refused: list[bool] = [False] * len(urls)

        async def one(index: int, url: str) -> None:
            try:
                parts[index], records[index] = await self._one(fetcher, url)
            except AddressRefused as exc:
                refused[index] = not exc.unresolved  # a name that does not resolve: an error
                parts[index], records[index] = (
                    f"{url}\n{'error' if exc.unresolved else 'refused'}: {exc}",
                    {"url": url, "error": str(exc)},
                )
            except FetchError as exc:
                parts[index], records[index] = (
                    f"{url}\nerror: {exc}",
                    {"url": url, "error": str(exc)},
                )
            except Exception as exc:  # a page that breaks extraction fails its URL, not the call
                failure = f"{type(exc).__name__}: {exc}"
                parts[index], records[index] = (
                    f"{url}\nerror: {failure}",
                    {"url": url, "error": f"{url}: {failure}"},
                )

        async with anyio.create_task_group() as group:
            for index, url in enumerate(urls):
                group.start_soon(one, index, url)
        if all("error" in record for record in records):
            code = "DENIED" if all(refused) else "TOOL_ERROR"
            message = "\n\n".join(record["error"] for record in records)
            return ToolResult.error(code, message, structured={"pages": records})
        return ToolResult.text("\n\n---\n\n".join(parts), structured={"pages": records})

    async def _one(self, fetcher: Fetcher, url: str) -> tuple[str, dict[str, Any]]:
        from .extract import extract

        page = await fetcher.fetch(url)
        settings = self.settings
        # A call stopped (its timeout, Ctrl-C) returns at once: the extraction cannot be
        # interrupted and ends in its thread, bounded by max_bytes (docs/security.md).
        got = await anyio.to_thread.run_sync(
            extract, page, settings.max_chars, settings.max_bytes, abandon_on_cancel=True
        )
        lines = [f"# {got.title}" if got.title else "# (untitled)", f"URL: {page.final_url}"]
        if page.redirects:
            lines.append(f"(redirected from {page.url})")
        text = "\n".join([*lines, "", got.text, *(f"\n[{note}]" for note in got.notes)])
        record = {
            "url": page.url,
            "final_url": page.final_url,
            "title": got.title,
            "content_type": page.content_type,
            "chars": got.chars,
            "cut": bool(got.notes and any(n.startswith("cut") for n in got.notes)),
        }
        return text, record


def fetcher_of(
    settings: WebSettings, resolve: Callable[[str, int], Sequence[str]] | None = None
) -> Fetcher:
    """The fetcher ``settings`` describe; ``resolve`` replaces the system's resolver."""
    from .fetch import Fetcher

    return Fetcher(
        allowed_hosts=tuple(settings.allowed_hosts),
        setting=_SETTING,
        timeout=settings.timeout,
        max_bytes=settings.max_bytes,
        max_redirects=settings.max_redirects,
        resolve=resolve,
        timeout_setting=f"plugins.entries.{_PLUGIN}.timeout",
    )


def web_extract_tool(settings: WebSettings, fetcher: Fetcher | None = None) -> Tool:
    """The ``web_extract`` tool."""
    return Tool(
        name="web_extract",
        description=(
            "Fetch web pages and return their main text (navigation and ads left out) as "
            "markdown with the title, cut to a bounded length with a note. Give full http(s) "
            "URLs; addresses of this machine and its local network are refused."
        ),
        parameters={
            "type": "object",
            "properties": {
                "urls": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 4096},
                    "minItems": 1,
                    "maxItems": MAX_URLS,
                }
            },
            "required": ["urls"],
            "additionalProperties": False,
        },
        handler=WebExtract(settings, fetcher),
        toolset=_PLUGIN,
        source="builtin",
        source_name=_PLUGIN,
        annotations=ToolAnnotations(
            read_only=True, destructive=False, idempotent=True, open_world=True
        ),
        timeout=settings.timeout * (settings.max_redirects + 2) + 30,
        core=True,
    )


@hookimpl(trylast=True)
def hermes_tools(context: PluginContext) -> Sequence[Tool]:
    """``web_extract`` and ``web_search``, configured from ``plugins.entries.web``; ``context``
    builds the search provider the settings name."""
    settings = context.settings_as(WebSettings)
    return [
        web_extract_tool(settings),
        web_search_tool(context, settings.search_provider, settings.max_results, _PLUGIN),
    ]


@hookimpl(trylast=True)
def hermes_doctor_checks() -> Sequence[DoctorCheckSpec]:
    """``hermes doctor``: whether ``web_extract`` can extract (its extra is installed). The
    tool is there either way and says so when called; the plugin, on by default, also serves
    ``web_search``, so a missing extra is not an error."""

    def extraction() -> DoctorResult:
        if importlib.util.find_spec("trafilatura") is None:
            return DoctorResult("not checked", EXTRACTION_MISSING)
        try:  # found is not enough: one whose own imports fail (lxml_html_clean) fails each call
            importlib.import_module("trafilatura")
        except ImportError as exc:
            return DoctorResult(
                "warning",
                f"web_extract cannot read pages: trafilatura does not import ({exc}): "
                "pip install 'hermes-core-agent[web]' (docs/web.md) in the Python that runs "
                "hermes; web_search does not need it",
            )
        return DoctorResult("ok", "trafilatura is installed: web_extract reads pages")

    return [DoctorCheckSpec("extraction", extraction)]
