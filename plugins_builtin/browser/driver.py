"""One session's browser: a Playwright driver, a headless Chromium and one context in it.

Started on the session's first ``browser_navigate`` and closed at its end (``browser_close``,
the session ending, or the host's Python exiting: the Playwright driver is a child process
whose browsers die with it). A hostile page is contained here: every request it makes
(navigations, redirects, subresources, WebSockets) goes through the session's
:class:`~.guard.AddressProxy`; dialogs are dismissed (a page asking to stay is left), new
windows closed and downloads refused, each noted for the model in the next result.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from .guard import REFUSED_HEADER, AddressProxy, Resolve, url_key

if TYPE_CHECKING:
    from playwright.async_api import (
        Browser,
        BrowserContext,
        Dialog,
        Download,
        FileChooser,
        Page,
        Playwright,
        Request,
        Response,
        WebSocket,
    )

__all__ = ["BrowserError", "DriverSettings", "SessionBrowser"]

_CLOSE_SECONDS = 15.0
_LAUNCH_SECONDS = 60.0
_MAX_NOTES = 20
_STOP_SECONDS = 5.0
_BACKGROUND: set[asyncio.Task[None]] = set()
"""Clean-up tasks still running (the loop keeps only weak references to its tasks)."""


class BrowserError(Exception):
    """A browser action that failed for a reason the model can act on (the message says it)."""


@dataclass(frozen=True)
class DriverSettings:
    """What a session's browser is started with."""

    executable: str
    headless: bool = True
    navigation_timeout: float = 30.0
    action_timeout: float = 10.0
    viewport: tuple[int, int] = (1280, 800)


@dataclass
class SessionBrowser:
    """The browser of one session: its context, the page the tools act on, and the notes
    (dialogs, windows, downloads, refused requests) the next result reports."""

    playwright: Playwright
    browser: Browser
    context: BrowserContext
    page: Page
    proxy: AddressProxy
    loop: asyncio.AbstractEventLoop
    notes: list[str] = field(default_factory=list)
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    crashed: bool = False
    """Whether the page's renderer crashed (Playwright's ``crash`` event)."""
    stuck: bool = False
    """Whether the page's loading could not be stopped (:meth:`stop_loading`)."""
    navigation_timeout: float = 30.0
    """Seconds a navigation may take (:attr:`DriverSettings.navigation_timeout`)."""
    document: tuple[str, str] = ("", "")
    """The address and content type of the last document the page's main frame was answered
    (a navigation, a click, a form sent), which the snapshot cannot tell (a PDF's viewer)."""

    @classmethod
    async def start(cls, settings: DriverSettings, resolve: Resolve) -> SessionBrowser:
        """Start the session's proxy and Playwright's driver, launch Chromium through the
        proxy and open one context with one page."""
        from playwright.async_api import async_playwright

        proxy = AddressProxy(resolve)
        address = await proxy.start()
        playwright = None
        try:
            playwright = await async_playwright().start()
            browser = await playwright.chromium.launch(
                executable_path=settings.executable,
                headless=settings.headless,
                timeout=_LAUNCH_SECONDS * 1000,
                # Every address through the proxy, loopback included (Playwright also removes
                # Chromium's implicit loopback bypass); no UDP outside it (WebRTC).
                proxy={"server": address, "bypass": ""},
                args=["--force-webrtc-ip-handling-policy=disable_non_proxied_udp"],
            )
            width, height = settings.viewport
            context = await browser.new_context(
                accept_downloads=False,
                viewport={"width": width, "height": height},
            )
            context.set_default_timeout(settings.action_timeout * 1000)
            context.set_default_navigation_timeout(settings.navigation_timeout * 1000)
            page = await context.new_page()
        except BaseException:
            with anyio.CancelScope(shield=True):
                if playwright is not None:
                    await playwright.stop()
                await proxy.close()
            raise
        made = cls(playwright, browser, context, page, proxy, asyncio.get_running_loop())
        made.navigation_timeout = settings.navigation_timeout
        context.on("page", made._on_new_page)
        context.on("requestfailed", made._on_request_end)
        context.on("response", made._on_response)
        made._watch(page)
        page.on("crash", made._on_crash)
        return made

    def stopped(self) -> str | None:
        """Why this browser can no longer show a page (Chromium or its page's renderer died:
        crashed, killed, out of memory), or ``None`` while it can."""
        if not self.browser.is_connected():
            return "the session's Chromium stopped (it crashed or was killed)"
        if self.crashed or self.page.is_closed():
            return "the session's page crashed or was killed (Chromium's renderer stopped)"
        if self.stuck:
            return "the session's page no longer answers (its loading could not be stopped)"
        return None

    def _on_crash(self, page: Page) -> None:
        self.crashed = True

    async def stop_loading(self) -> None:
        """Stop the page's loading (a navigation past its timeout), as the browser's stop
        button does: Playwright's snapshots and clicks wait on a navigation still going, and
        ``window.stop()`` is a script of the page, which waits too."""
        with anyio.move_on_after(_STOP_SECONDS) as waiting, contextlib.suppress(Exception):
            devtools = await self.context.new_cdp_session(self.page)
            try:
                await devtools.send("Page.stopLoading")
            finally:
                await devtools.detach()
        # A page that cannot be stopped (it opens dialogs without end) is put away as a
        # crashed one is: the next browser_navigate starts a new browser.
        self.stuck = self.stuck or waiting.cancelled_caught

    def note(self, text: str) -> None:
        """Keep ``text`` for the next result (at most a few dozen notes between two results)."""
        if len(self.notes) < _MAX_NOTES:
            self.notes.append(text)
        elif len(self.notes) == _MAX_NOTES:
            self.notes.append("(more events left out)")

    def take_notes(self) -> list[str]:
        """The notes since the last result, emptied."""
        taken, self.notes = self.notes, []
        return taken

    def _watch(self, page: Page) -> None:
        page.on("dialog", self._on_dialog)
        page.on("download", self._on_download)
        page.on("websocket", self._on_websocket)
        # Listened to, the chooser is Playwright's: no window of the system's opens (with
        # headless false), and no file of the user's reaches the page.
        page.on("filechooser", self._on_file_chooser)

    def _on_file_chooser(self, chooser: FileChooser) -> None:
        self.note("the page asked for a file; the browser tools give a page none")

    def _on_websocket(self, socket: WebSocket) -> None:
        # A WebSocket's failure is no failed request to Playwright: its own event says it.
        socket.on("socketerror", lambda _error: self._on_socket_error(socket.url))

    def _on_socket_error(self, url: str) -> None:
        reason = self.refusal_of(url)
        if reason is not None:
            self.note(f"refused a request of the page: {reason}")

    def _on_dialog(self, dialog: Dialog) -> None:
        shown = _clip(dialog.message, 200)
        if dialog.type == "beforeunload":
            # Dismissed, it is "stay on this page": a page could hold the browser for good.
            self.note("the page asked to stay (a beforeunload dialog); it was left")
            _spawn(dialog.accept)
            return
        article = "an" if dialog.type == "alert" else "a"
        self.note(f"the page opened {article} {dialog.type} dialog ({shown!r}); it was dismissed")
        _spawn(dialog.dismiss)

    def _on_download(self, download: Download) -> None:
        self.note(f"the page started a download ({_clip(download.url, 200)}); it was refused")
        _spawn(download.cancel)

    def refusal_of(self, url: str) -> str | None:
        """Why the proxy refused ``url``'s host, when it did."""
        return self.proxy.refusals.get(url_key(url))

    def _on_request_end(self, request: Request) -> None:
        reason = self.refusal_of(request.url)
        if reason is not None:
            self.note(f"refused a request of the page: {reason}")

    def _on_response(self, response: Response) -> None:
        if REFUSED_HEADER.lower() in response.headers:
            self._on_request_end(response.request)
        from playwright.async_api import Error as PlaywrightError

        request = response.request
        if not request.is_navigation_request():
            return
        try:
            frame = request.frame
        except PlaywrightError:
            # A service worker's request, or a popup's first navigation, issued before its frame
            # exists: Playwright raises on asking, which failed the call that was reading the page.
            return
        if frame is self.page.main_frame:
            self.document = (response.url, response.headers.get("content-type", ""))

    def _on_new_page(self, page: Page) -> None:
        if page is self.page:
            return
        self.note(
            f"the page opened a new window ({_clip(page.url, 200)}); it was closed: "
            "call browser_navigate with its address to follow it"
        )
        _spawn(page.close)

    async def close(self) -> None:
        """Close the context, the browser and the driver (shielded, within a bound: a closing
        session never waits on a stuck browser for long)."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_SECONDS):
            try:
                await self.context.close()
                await self.browser.close()
            finally:
                try:
                    await self.playwright.stop()
                finally:
                    await self.proxy.close()


def _spawn(action: Callable[[], object]) -> None:
    """Run a Playwright clean-up coroutine in the background; a page already gone is fine."""

    async def run() -> None:
        try:
            awaited = action()
            if asyncio.iscoroutine(awaited):
                await awaited
        except Exception:  # the page closed meanwhile: nothing to clean up
            return

    task = asyncio.get_running_loop().create_task(run())
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
