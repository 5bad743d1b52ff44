"""What each ``browser_*`` tool does, on the session's :class:`~.driver.SessionBrowser`.

Results are text for the model: the page's title and address, its accessibility snapshot
(``textbox "Email" [ref=e5]``: a reference stays the element's for as long as the page shows
it) cut to ``max_snapshot_chars`` with a note, and the notes of what the page did meanwhile
(dialogs dismissed, windows closed, downloads and requests refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from hermes_core._plugin_support import (
    create_private_file,
    encodable,
    encodable_value,
    private_dir,
    shortened,
)
from hermes_core.agent import ImagePart, ModelError, session_model
from hermes_core.plugin import Session, ToolResult

from . import STATE_KEY
from .chromium import ChromiumMissing, launch_failure
from .driver import BrowserError, DriverSettings, SessionBrowser
from .guard import REFUSED_HEADER, Refused, Resolve, scheme_refusal
from .loading import (
    BrowserRefused,
    failure,
    first_line,
    navigated,
    navigation_failure,
    settle,
)

if TYPE_CHECKING:
    from playwright.async_api import FloatRect

__all__ = ["STATE_KEY", "BrowserActions", "close_session_browser"]

_LOCK_KEY = "browser.starting"
_PAGE_TYPES = ("text/", "application/xhtml+xml", "application/xml", "application/json")
"""The content types Chromium shows as a page the snapshot can read."""
_TITLE = 300
_SHOT_PIXELS = 16384
_SHOWN_TITLE = 200
_URL = 2048
_REF = re.compile(r"(?:f[0-9]{1,6})?e[0-9]{1,9}")
_START_AGAIN = (
    "call browser_navigate to start a new one (the pages, cookies and history of this one are gone)"
)
_INSTALL_PLAYWRIGHT = (
    "the browser tools need Playwright for Python: pip install 'hermes-core-agent[browser]'"
)


@dataclass(frozen=True)
class BrowserActions:
    """The browser tools' handlers over one configuration."""

    driver: Callable[[], DriverSettings]
    """The driver's settings, found when a session first needs a browser (a missing Chromium
    raises :class:`~.chromium.ChromiumMissing` then, not when the host starts)."""
    resolve: Resolve
    screenshots: Path
    max_snapshot_chars: int = 40_000

    async def navigate(self, session: Session, url: str) -> ToolResult:
        """Open ``url`` in the session's page (starting its browser on first use)."""
        reason = scheme_refusal(url)
        if reason is None:
            try:  # before a browser starts: the same rule the proxy applies to every request
                await anyio.to_thread.run_sync(self.resolve, url)
            except Refused as exc:
                if exc.unresolved:  # as web_extract's: an error of the call, not a refusal
                    return ToolResult.error("TOOL_ERROR", f"browser_navigate: {exc}")
                reason = str(exc)
        if reason is not None:
            return ToolResult.error("BLOCKED", f"browser_navigate refused: {reason}")
        return await self._run(session, lambda browser: self._goto(browser, url), start=True)

    async def _goto(self, browser: SessionBrowser, url: str) -> ToolResult:
        try:
            response = await navigated(
                browser, browser.page.goto(url, wait_until="domcontentloaded")
            )
        except Exception as exc:
            raise await navigation_failure(browser, f"loading {url}", exc, url=url) from exc
        if response is not None and response.headers.get(REFUSED_HEADER.lower()):
            browser.take_notes()
            raise BrowserRefused(f"browser_navigate refused: {await response.text()}")
        status = response.status if response is not None else None
        # An error page is a page: shown, with the status, so the model knows it is not the one
        # it wanted.
        done = f"the server answered HTTP {status}" if status is not None and status >= 400 else ""
        return await self._page_report(browser, done, status)

    async def snapshot(self, session: Session) -> ToolResult:
        """The accessibility snapshot of the session's page."""
        return await self._run(session, lambda browser: self._page_report(browser, ""))

    async def click(self, session: Session, ref: str) -> ToolResult:
        """Click the element ``ref`` of the last snapshot."""

        async def act(browser: SessionBrowser) -> ToolResult:
            # no_wait_after: a click that starts a navigation would wait on it for its own
            # action_timeout, and fail on a page that never loads; settle waits for it.
            click = browser.page.get_by_ref(ref).click
            await _on_element(browser, ref, "click", lambda: click(no_wait_after=True))
            await settle(browser)
            return await self._page_report(browser, f"clicked [ref={ref}]")

        return await self._run(session, act)

    async def type(self, session: Session, ref: str, text: str, submit: bool = False) -> ToolResult:
        """Replace the text of the field ``ref`` with ``text``; ``submit`` presses Enter."""

        async def act(browser: SessionBrowser) -> ToolResult:
            field = browser.page.get_by_ref(ref)
            await _on_element(browser, ref, "type into", lambda: field.fill(text))
            if submit:
                press = field.press
                await _on_element(
                    browser, ref, "submit", lambda: press("Enter", no_wait_after=True)
                )
                await settle(browser)
            done = f"typed {len(text)} characters into [ref={ref}]" + (
                " and pressed Enter" if submit else ""
            )
            return await self._page_report(browser, done)

        return await self._run(session, act)

    async def scroll(
        self, session: Session, direction: Literal["up", "down"] = "down", pages: float = 1.0
    ) -> ToolResult:
        """Scroll the page by ``pages`` screens."""

        async def act(browser: SessionBrowser) -> ToolResult:
            height = (browser.page.viewport_size or {"height": 800})["height"]
            step = height * pages * (1 if direction == "down" else -1)
            start = await browser.page.evaluate("() => scrollY")
            await browser.page.mouse.wheel(0, step)
            where = await browser.page.evaluate(_SCROLLED, start)
            top, total, shown = (int(value) for value in where)
            text = f"scrolled {direction}: showing {top}-{top + shown} of {total} pixels"
            return _result(browser, text)

        return await self._run(session, act)

    async def back(self, session: Session) -> ToolResult:
        """Go back one page in the session's history."""

        async def act(browser: SessionBrowser) -> ToolResult:
            try:
                went = await navigated(browser, browser.page.go_back(wait_until="domcontentloaded"))
            except Exception as exc:
                raise await navigation_failure(browser, "going back", exc) from exc
            if went is None and browser.page.url in ("", "about:blank"):
                raise BrowserError("there is no earlier page to go back to")
            return await self._page_report(browser, "went back")

        return await self._run(session, act)

    async def press(self, session: Session, key: str) -> ToolResult:
        """Press ``key`` (``Enter``, ``Escape``, ``Control+A``...) in the focused element."""

        async def act(browser: SessionBrowser) -> ToolResult:
            try:
                await browser.page.keyboard.press(key)
            except Exception as exc:
                raise BrowserError(f"cannot press {key!r}: {first_line(exc)}") from exc
            await settle(browser)
            return await self._page_report(browser, f"pressed {key}")

        return await self._run(session, act)

    async def screenshot(self, session: Session, full_page: bool = False) -> ToolResult:
        """A PNG of the page, saved under the session's screenshot folder."""

        async def act(browser: SessionBrowser) -> ToolResult:
            page, cut = browser.page, ""
            try:
                # Chromium draws no image much taller than this (past it the capture fails).
                height = int(await page.evaluate("document.documentElement.scrollHeight"))
                clip: FloatRect | None = None
                if full_page and height > _SHOT_PIXELS:
                    width = (page.viewport_size or {"width": 1280})["width"]
                    clip = {"x": 0, "y": 0, "width": width, "height": _SHOT_PIXELS}
                    cut = f" (the first {_SHOT_PIXELS} of {height} pixels: the page is taller)"
                data = await page.screenshot(full_page=full_page, clip=clip, type="png")
            except Exception as exc:
                raise failure(browser, "taking a screenshot", exc) from exc
            folder = private_dir(self.screenshots / session.id)
            path = _free_path(folder)
            with create_private_file(path) as handle:
                handle.write(data)
            text = f"saved a screenshot of {_shown(page.url)}{cut} ({len(data)} bytes) to {path}"
            return _result(browser, text, structured={"path": str(path), "bytes": len(data)})

        return await self._run(session, act)

    async def vision(
        self, session: Session, question: str = "Describe what the page shows."
    ) -> ToolResult:
        """A screenshot of the page shown to the conversation's own model (its vision input);
        the model's answer is the result."""
        model = session_model(session)
        if model is None:
            return ToolResult.error("NOT_AVAILABLE", NO_MODEL)

        async def act(browser: SessionBrowser) -> ToolResult:
            data = await browser.page.screenshot(type="png")
            url = _shown(browser.page.url)
            try:
                answer = await model.look(ImagePart("image/png", data), question)
            except ModelError as exc:
                return ToolResult.error("TOOL_ERROR", f"browser_vision: the model failed: {exc}")
            return _result(browser, answer, structured={"url": url, "bytes": len(data)})

        return await self._run(session, act)

    async def close(self, session: Session) -> ToolResult:
        """Close the session's browser (the next ``browser_navigate`` starts a new one)."""
        if await close_session_browser(session):
            return ToolResult.text("closed the browser")
        return ToolResult.text("no browser was open")

    async def _run(
        self,
        session: Session,
        act: Callable[[SessionBrowser], Awaitable[ToolResult]],
        *,
        start: bool = False,
    ) -> ToolResult:
        try:
            browser = await self._browser(session, start)
            async with browser.lock:
                try:
                    return await act(browser)
                except BrowserRefused:
                    raise
                except BrowserError as exc:
                    stopped = browser.stopped()
                    if stopped is None:
                        raise
                    raise BrowserError(f"{exc}\n{stopped}: {_START_AGAIN}") from exc
        except BrowserRefused as exc:
            return ToolResult.error("BLOCKED", str(exc))
        except (BrowserError, ChromiumMissing) as exc:
            return ToolResult.error("TOOL_ERROR", str(exc))

    async def _browser(self, session: Session, start: bool) -> SessionBrowser:
        existing = session.state.get(STATE_KEY)
        stopped = None
        if isinstance(existing, SessionBrowser):
            if existing.loop is not asyncio.get_running_loop():
                raise BrowserError(
                    "this session's browser was started in another event loop: "
                    "call browser_close, then browser_navigate"
                )
            stopped = existing.stopped()
            if stopped is None:
                return existing
            # A dead browser answers every call with "Target closed": put it away, so that the
            # next navigation starts a new one.
            if session.state.get(STATE_KEY) is existing:
                del session.state[STATE_KEY]
            with contextlib.suppress(Exception):
                await existing.close()
            if not start:
                raise BrowserError(f"{stopped}: {_START_AGAIN}")
        if not start:
            raise BrowserError("no page is open in this session: call browser_navigate first")
        starting = session.state.setdefault(_LOCK_KEY, asyncio.Lock())
        async with starting:
            existing = session.state.get(STATE_KEY)
            if isinstance(existing, SessionBrowser):
                return existing
            try:
                import playwright.async_api  # noqa: F401
            except ImportError as exc:
                raise BrowserError(_INSTALL_PLAYWRIGHT) from exc
            settings = self.driver()
            try:
                made = await SessionBrowser.start(settings, self.resolve)
            except Exception as exc:
                # Playwright's message holds the browser's own log: the reason is in it.
                raise BrowserError(
                    f"cannot start Chromium ({settings.executable}): {launch_failure(str(exc))}"
                ) from exc
            if stopped is not None:
                made.note(f"{stopped}; a new browser was started (without the old one's cookies)")
            session.state[STATE_KEY] = made
            return made

    async def _page_report(
        self, browser: SessionBrowser, done: str, status: int | None = None
    ) -> ToolResult:
        page = browser.page
        try:
            snapshot = await page.aria_snapshot(mode="ai")
        except Exception as exc:
            raise failure(browser, "reading the page", exc) from exc
        limit = self.max_snapshot_chars
        if len(snapshot) > limit:
            snapshot = (
                snapshot[:limit] + f"\n[snapshot cut at {limit} of {len(snapshot)} characters]"
            )
        # The page chooses its title and (history.replaceState) its address: bounded too.
        title = await page.title()
        url = _shown(page.url)
        lines = [done] if done else []
        shows = _not_a_page(browser, page.url)
        if shows is None and not snapshot.strip():
            shows = (
                "the snapshot shows nothing of this page (no text or control it can read: "
                "images, a canvas); browser_vision shows it as it looks"
            )
        lines += [shows] if shows else []
        lines += [f"page: {shortened(title, _SHOWN_TITLE)!r} at {url}", snapshot]
        title = shortened(title, _TITLE)
        structured: dict[str, Any] = {"url": url, "title": title}
        if status is not None:  # a navigation's answer (HTTP status)
            structured["status"] = status
        return _result(browser, "\n".join(lines), structured=structured)


def _not_a_page(browser: SessionBrowser, url: str) -> str | None:
    """What the page at ``url`` is when it is no web page (a PDF, an image): Chromium shows it
    in a viewer of its own, with no title and no snapshot, which the model would read as a
    blank page of the site."""
    answered, kind = browser.document
    kind = kind.split(";")[0].strip().lower()
    if answered != url or not kind or kind.startswith(_PAGE_TYPES):
        return None
    from hermes_core._plugin_support import readers_of

    return (
        f"{_shown(url)} is {kind}, not a web page: the browser tools show web pages, and its "
        f"content is not in the snapshot; {readers_of(kind)}"
    )


async def close_session_browser(session: Session) -> bool:
    """Close ``session``'s browser when it has one; whether it had."""
    browser = session.state.pop(STATE_KEY, None)
    if not isinstance(browser, SessionBrowser):
        return False
    await browser.close()
    return True


async def _on_element(
    browser: SessionBrowser, ref: str, what: str, action: Callable[[], Awaitable[None]]
) -> None:
    if not _REF.fullmatch(ref):
        raise BrowserError(
            f"{ref!r} is not an element reference: give one of the snapshot's, e.g. e12"
        )
    doing = f"trying to {what} [ref={ref}]"
    try:
        # An unknown reference fails now, not after the action's timeout.
        if not await browser.page.get_by_ref(ref).count():
            raise BrowserError(
                f"{doing}: no such element on the page now; take a new browser_snapshot"
            )
        await action()
    except BrowserError:
        raise
    except Exception as exc:
        raise failure(browser, doing, exc, ref=True) from exc


# Chromium handles a wheel event after `mouse.wheel` returns, and may animate it: wait until the
# page has moved and held still for a few frames (or, if it cannot move, for half a second).
_SCROLLED = """async (start) => {
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  const began = performance.now();
  let last = scrollY, still = 0;
  while (performance.now() - began < 1500) {
    await frame();
    if (scrollY !== last) { last = scrollY; still = 0; continue; }
    still += 1;
    if ((scrollY !== start && still >= 3) || performance.now() - began > 500) break;
  }
  return [Math.round(scrollY), document.documentElement.scrollHeight, innerHeight];
}"""


NO_MODEL = (
    "browser_vision needs this agent's own model, and none runs this session (under hermes "
    "serve, use browser_screenshot and look at the file). Use it from hermes run, chat or acp."
)


def _result(browser: SessionBrowser, text: str, *, structured: object = None) -> ToolResult:
    notes = browser.take_notes()
    if notes:
        text += "\n" + "\n".join(f"note: {note}" for note in notes)
    # A page's text may hold half a UTF-16 pair (JavaScript strings can), which no UTF-8
    # output holds: a terminal, a pipe or a JSON answer would fail on it.
    return ToolResult.text(encodable(text), structured=encodable_value(structured))


def _shown(url: str) -> str:
    """A page's address as a result gives it: the page may have made it 2 MB long."""
    return url if len(url) <= _URL else url[:_URL] + "..."


def _free_path(folder: Path) -> Path:
    for number in itertools.count(1):
        path = folder / f"screenshot-{number}.png"
        if not path.exists():
            return path
    raise AssertionError("unreachable")
