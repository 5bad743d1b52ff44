"""How the browser tools wait for a page and say why one failed: a navigation an action
started (a click, an Enter) waited for by ``navigation_timeout`` and stopped past it, the error
page Chromium shows after a failed one, and a Playwright error as one line the model can act on
(a refusal of the address rules is :class:`BrowserRefused`, whose result is ``BLOCKED``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable
from typing import TypeVar

import anyio

from .driver import BrowserError, SessionBrowser

__all__ = [
    "STOPPED",
    "BrowserRefused",
    "error_page_shown",
    "failure",
    "first_line",
    "navigated",
    "navigation_failure",
    "settle",
    "timed_out",
]

_QUIET_MS = 3000
_ERROR_PAGE_MS = 2000
_GRACE_SECONDS = 2.0
"""How long past ``navigation_timeout`` a navigation is waited for before hermes stops it."""

T = TypeVar("T")


async def navigated(browser: SessionBrowser, going: Awaitable[T]) -> T:
    """``going``, a navigation of Playwright's (``goto``, ``go_back``), given up a moment past
    ``navigation_timeout`` as a :class:`TimeoutError`: Playwright's own timeout never fires on
    a page opening dialogs without end, and the call waited for the host's limit."""
    try:
        with anyio.fail_after(browser.navigation_timeout + _GRACE_SECONDS):
            return await going
    except TimeoutError:
        raise TimeoutError(
            f"no answer within navigation_timeout ({browser.navigation_timeout:g} s)"
        ) from None


async def error_page_shown(browser: SessionBrowser, exc: Exception) -> None:
    """After a navigation that failed on a network error (a refused redirect), wait for the
    error page Chromium shows a moment later: arriving during the next navigation, it cut
    that one short ("interrupted by another navigation to chrome-error://")."""
    text = first_line(exc)
    if "net::ERR_" not in text or "net::ERR_ABORTED" in text:  # no error page for these
        return
    with contextlib.suppress(Exception):
        await browser.page.wait_for_url(
            lambda address: address.startswith("chrome-error:"),
            wait_until="domcontentloaded",
            timeout=_ERROR_PAGE_MS,
        )


async def settle(browser: SessionBrowser) -> None:
    """Let a navigation the action started reach its DOM (a page that never loads leaves the
    wait at the navigation timeout; the result then shows what there is)."""
    # An Enter or a click starts its navigation a moment later: the old page is already loaded,
    # so wait for the network to go quiet first (briefly; a page that keeps polling goes on).
    with contextlib.suppress(Exception):
        await browser.page.wait_for_load_state("networkidle", timeout=_QUIET_MS)
    # Not wait_for_load_state: the page still shown has loaded, and it returns at once while
    # the next one is coming. A script waits for the page the navigation brings, if any.
    with anyio.move_on_after(browser.navigation_timeout) as waiting:
        with contextlib.suppress(Exception):
            await browser.page.evaluate("document.readyState")
    if waiting.cancelled_caught:  # a slow page: stopped, to show what is there
        await browser.stop_loading()
        then = browser.stopped() if browser.stuck else STOPPED
        browser.note(f"the page had not finished loading at navigation_timeout; {then}")


def failure(
    browser: SessionBrowser, doing: str, exc: Exception, *, ref: bool = False, url: str = ""
) -> BrowserError:
    """What the model is told of ``exc``, raised while ``doing`` (``ref``: on an element;
    ``url``: loading it)."""
    text = first_line(exc)
    if "net::ERR_UNSAFE_REDIRECT" in text:  # Chromium's own rule, before any request
        return BrowserRefused(
            f"{doing} was refused: it redirects to an address that is not http or https "
            "(file:, data:, chrome:...), which the browser tools never open"
        )
    refused = [note for note in browser.notes if note.startswith("refused")]
    if "net::ERR_" in text and refused:
        browser.take_notes()
        return BrowserRefused(f"{doing} was refused: {refused[-1].split(': ', 1)[1]}")
    if "net::ERR_TUNNEL_CONNECTION_FAILED" in text and url and browser.refusal_of(url):
        return BrowserRefused(f"{doing} was refused: {browser.refusal_of(url)}")
    if url and "Download is starting" in text:  # the address answers with a file to save
        return BrowserError(
            f"{url} is a file download, which the browser tools refuse (nothing was saved); "
            "web_extract reads pages and text"
        )
    if timed_out(exc):
        return BrowserError(f"{doing} timed out: {text}")
    if ref and ("aria-ref" in text or "not found" in text.lower()):
        return BrowserError(
            f"{doing}: no such element on the page now; take a new browser_snapshot"
        )
    return BrowserError(f"{doing} failed: {text}")


async def navigation_failure(
    browser: SessionBrowser, doing: str, exc: Exception, *, url: str = ""
) -> BrowserError:
    """What the model is told of a navigation (``doing``, to ``url``) that raised ``exc``, once
    the browser is settled: the error page of a failed one shown, one past its timeout
    stopped (the page shown before stays readable)."""
    await error_page_shown(browser, exc)
    said = failure(browser, doing, exc, url=url)
    if not timed_out(exc):
        return said
    await browser.stop_loading()
    if browser.stuck:  # the call's error says so, and how to go on
        return said
    return BrowserError(f"{said}\n{STOPPED}")


def timed_out(exc: Exception) -> bool:
    """Whether ``exc`` is Playwright's timeout."""
    return "Timeout" in type(exc).__name__ or "Timeout" in first_line(exc)


STOPPED = "its loading was stopped: browser_snapshot shows the page the browser shows now"


class BrowserRefused(BrowserError):
    """An address the rules refuse (the result's code is ``BLOCKED``)."""


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (Playwright's next ones are its call log)."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:500]
