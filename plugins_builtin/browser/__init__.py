"""The ``browser`` toolset: a headless Chromium driven with Playwright for Python.

``browser_navigate`` opens an address and shows the page's accessibility snapshot, whose
references (``[ref=e12]``) ``browser_click`` and ``browser_type`` act on; ``browser_snapshot``,
``browser_scroll``, ``browser_back``, ``browser_press``, ``browser_screenshot`` and
``browser_close`` do what they say; ``browser_vision`` shows a screenshot to the
conversation's own model (``session_model``) and returns its answer. Each session gets its own
browser and context, started on its first navigation and closed when the session ends. The
tools are registered when Playwright is installed (the extra ``hermes-core-agent[browser]``);
the Chromium is the user's own
(:mod:`.chromium`). Every request a page makes goes through a proxy of the session's that
applies the address rules of ``web_extract`` (:mod:`.guard`). Settings:
``plugins.entries.browser`` (:class:`BrowserEntry`); docs/browser.md.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from annotated_types import Ge, Le

from hermes_core._plugin_support import AddressSettings
from hermes_core.plugin import (
    DoctorCheckSpec,
    DoctorResult,
    PluginContext,
    Session,
    Tool,
    ToolAnnotations,
    ToolResult,
    hookimpl,
)

if TYPE_CHECKING:
    from hermes_core import Config, Environment

    from .actions import BrowserActions
    from .driver import DriverSettings

_PLUGIN = "browser"
_TOOLSET = "browser"
PLAYWRIGHT_MISSING = (
    "Playwright for Python is not installed, so no browser tool is registered: "
    "pip install 'hermes-core-agent[browser]' (docs/browser.md)"
)
STATE_KEY = "browser.session"
"""The key of a session's browser in ``Session.state`` (set by :mod:`.actions`)."""


@dataclass(frozen=True)
class BrowserEntry(AddressSettings):
    """What ``plugins.entries.browser`` may set (checked by ``PluginContext.settings_as``);
    ``allowed_hosts`` (:class:`AddressSettings`): the hosts the page may reach although they
    resolve to a loopback, private, link-local or metadata address."""

    executable: str | None = None
    """The Chromium to drive; default: ``HERMES_BROWSER_EXECUTABLE``, else ``chromium``,
    ``chromium-browser``, ``google-chrome`` or ``google-chrome-stable`` on ``PATH``."""
    headless: bool = True
    navigation_timeout: Annotated[float, Ge(1), Le(600)] = 30.0
    action_timeout: Annotated[float, Ge(1), Le(600)] = 10.0
    max_snapshot_chars: Annotated[int, Ge(1000)] = 40_000


def build_tools(entry: BrowserEntry, env: Environment) -> list[Tool]:
    """The browser tools over ``entry``; their handlers are made at the first call."""
    variables = dict(env.variables)

    @functools.cache
    def actions() -> BrowserActions:
        # Here, at a call, not when the tools are listed: the driver brings asyncio (and the
        # agent's package ssl), which no command that only lists tools (`plugins list`) needs.
        from .actions import BrowserActions
        from .addresses import address_rule
        from .chromium import find_chromium
        from .driver import DriverSettings

        def driver() -> DriverSettings:
            return DriverSettings(
                find_chromium(entry.executable, variables),
                headless=entry.headless,
                navigation_timeout=entry.navigation_timeout,
                action_timeout=entry.action_timeout,
            )

        return BrowserActions(
            driver,
            address_rule(entry.allowed_hosts),
            env.cache_dir / "browser",
            max_snapshot_chars=entry.max_snapshot_chars,
        )

    # Room for starting Chromium, then a navigation and the wait after it.
    timeout = 2 * entry.navigation_timeout + entry.action_timeout + 30
    # Reading the web (opening, scrolling, going back) is allowed under the default approval
    # policy; what acts on a site (click, type, press: a form sent, a post made) is asked for.
    fetching = ToolAnnotations(read_only=True, destructive=False, open_world=True)
    acting = ToolAnnotations(read_only=False, destructive=False, open_world=True)
    local = ToolAnnotations(read_only=False, destructive=False, open_world=False)
    reading = ToolAnnotations(read_only=True, destructive=False, open_world=False)
    ref = {"type": "string", "description": "an element reference of the snapshot, e.g. e12"}

    def tool(
        name: str,
        description: str,
        handler: Any,
        properties: dict[str, Any],
        required: Sequence[str] = (),
        annotations: ToolAnnotations = acting,
    ) -> Tool:
        return Tool(
            name=name,
            description=description,
            parameters={
                "type": "object",
                "properties": properties,
                "required": list(required),
                "additionalProperties": False,
            },
            handler=handler,
            toolset=_TOOLSET,
            source="builtin",
            source_name=_PLUGIN,
            annotations=annotations,
            timeout=timeout,
        )

    return [
        tool(
            "browser_navigate",
            "Open a web page (http or https) in this session's browser and show its "
            "accessibility snapshot: each element with a reference like [ref=e12] that "
            "browser_click and browser_type take.",
            _on_call(actions, "navigate"),
            {"url": {"type": "string", "minLength": 1, "maxLength": 8192}},
            ["url"],
            fetching,
        ),
        tool(
            "browser_snapshot",
            "Show the current page's accessibility snapshot again (after the page changed).",
            _on_call(actions, "snapshot"),
            {},
            annotations=reading,
        ),
        tool(
            "browser_click",
            "Click an element of the page by its snapshot reference; shows the page after.",
            _on_call(actions, "click"),
            {"ref": ref},
            ["ref"],
        ),
        tool(
            "browser_type",
            "Replace the text of a field by its snapshot reference; submit=true presses Enter "
            "after typing.",
            _on_call(actions, "type"),
            {
                "ref": ref,
                "text": {"type": "string", "maxLength": 100_000},
                "submit": {"type": "boolean", "default": False},
            },
            ["ref", "text"],
        ),
        tool(
            "browser_scroll",
            "Scroll the page up or down by a number of screens (default one).",
            _on_call(actions, "scroll"),
            {
                "direction": {"enum": ["up", "down"], "default": "down"},
                "pages": {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "default": 1},
            },
            annotations=fetching,
        ),
        tool(
            "browser_back",
            "Go back to the previous page of this session's browser.",
            _on_call(actions, "back"),
            {},
            annotations=fetching,
        ),
        tool(
            "browser_press",
            "Press a key or a chord in the focused element: Enter, Escape, Tab, ArrowDown, "
            "Control+A...",
            _on_call(actions, "press"),
            {"key": {"type": "string", "minLength": 1, "maxLength": 64}},
            ["key"],
        ),
        tool(
            "browser_screenshot",
            "Save a PNG screenshot of the page (full_page=true: the whole page, not just the "
            "window) and return its path.",
            _on_call(actions, "screenshot"),
            {"full_page": {"type": "boolean", "default": False}},
            annotations=local,
        ),
        tool(
            "browser_vision",
            "Look at the page as it is shown (a screenshot) and answer a question about it: "
            "layout, images, charts, what the snapshot's text does not say.",
            _on_call(actions, "vision"),
            {"question": {"type": "string", "maxLength": 4000}},
            annotations=reading,
        ),
        tool(
            "browser_close",
            "Close this session's browser (its pages, cookies and history).",
            _on_call(actions, "close"),
            {},
            annotations=local,
        ),
    ]


def _on_call(
    actions: Callable[[], BrowserActions], name: str
) -> Callable[..., Awaitable[ToolResult]]:
    """The handler that calls ``actions()``'s method ``name`` (the tool's schema checks the
    arguments before)."""

    async def handler(session: Session, **arguments: Any) -> ToolResult:
        method: Callable[..., Awaitable[ToolResult]] = getattr(actions(), name)
        return await method(session, **arguments)

    return handler


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """The browser tools, when Playwright is installed."""
    entry = PluginContext.of(_PLUGIN, config, env).settings_as(BrowserEntry)
    if importlib.util.find_spec("playwright") is None:
        return []
    return build_tools(entry, env)


@hookimpl(trylast=True)
def hermes_doctor_checks(config: Config, env: Environment) -> Sequence[DoctorCheckSpec]:
    """``hermes doctor``: whether Playwright is installed and which Chromium the tools would
    drive (nothing is started). Without Playwright the plugin, on by default, registers no
    tool: that is an error only when the user asked for it (``plugins.enabled`` names it)."""
    entry = PluginContext.of(_PLUGIN, config, env).settings_as(BrowserEntry)
    installed = importlib.util.find_spec("playwright") is not None
    wanted = installed or _PLUGIN in config.plugins.enabled

    def playwright() -> DoctorResult:
        if installed:
            return DoctorResult("ok", "Playwright for Python is installed")
        return DoctorResult("error" if wanted else "not checked", PLAYWRIGHT_MISSING)

    def chromium() -> DoctorResult:
        from .chromium import ChromiumMissing, find_chromium

        try:
            found = find_chromium(entry.executable, dict(env.variables))
        except ChromiumMissing as exc:
            return DoctorResult("error" if wanted else "not checked", str(exc))
        return DoctorResult("ok", f"the tools drive {found}")

    return [DoctorCheckSpec("playwright", playwright), DoctorCheckSpec("chromium", chromium)]


@hookimpl(trylast=True)
async def hermes_session_end(session: Session) -> None:
    """Close the session's browser."""
    if STATE_KEY not in session.state:
        return  # no browser was started: every session that ran no browser tool
    # Here, not at the top: the actions bring asyncio and the agent's model calls.
    from .actions import close_session_browser

    await close_session_browser(session)
