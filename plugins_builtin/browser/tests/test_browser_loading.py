"""A page that never loads, reached by ``browser_navigate`` or by a click: its loading is
stopped at the timeout, and the page shown stays one the next calls can read."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_site import Site, browser_config, ok_text

pytestmark = pytest.mark.anyio


async def test_after_a_navigation_that_timed_out_the_page_shown_can_be_read(
    host_factory: Any, site: Site
) -> None:
    # The navigation went on loading after its timeout: each later snapshot or click waited
    # on it for action_timeout, then failed ('reading the page timed out').
    host = host_factory(browser_config(navigation_timeout=2, action_timeout=30))
    async with host.session() as session:
        ok_text(await host.dispatch("browser_navigate", {"url": site.at("/about")}, session))
        timed_out = await host.dispatch("browser_navigate", {"url": site.at("/never")}, session)
        snapshot = await host.dispatch("browser_snapshot", {}, session)

    assert timed_out.error_code == "TOOL_ERROR"
    assert "timed out" in timed_out.text_content
    assert "loading was stopped" in timed_out.text_content, timed_out.text_content
    assert 'heading "About us"' in ok_text(snapshot)


async def test_a_click_onto_a_page_that_never_loads_shows_the_page_there_is(
    host_factory: Any, site: Site
) -> None:
    host = host_factory(browser_config(navigation_timeout=2, action_timeout=30))
    async with host.session() as session:
        page = ok_text(
            await host.dispatch("browser_navigate", {"url": site.at("/to-never")}, session)
        )
        link = re.search(r'link "Never" \[ref=(\w+)\]', page)
        assert link, page
        clicked = await host.dispatch("browser_click", {"ref": link.group(1)}, session)
        snapshot = await host.dispatch("browser_snapshot", {}, session)

    text = ok_text(clicked)
    assert "the page had not finished loading" in text
    assert "loading was stopped" in text
    assert 'link "Never"' in ok_text(snapshot)


async def test_a_page_asking_to_stay_cannot_keep_the_browser_on_it(
    host_factory: Any, site: Site
) -> None:
    # Its beforeunload dialog was dismissed, which is "stay": browser_navigate failed
    # (net::ERR_ABORTED), browser_back timed out, a link led nowhere, until browser_close.
    host = host_factory()
    async with host.session() as session:
        page = ok_text(await host.dispatch("browser_navigate", {"url": site.at("/stay")}, session))
        edit = re.search(r'button "Edit" \[ref=(\w+)\]', page)
        leave = re.search(r'link "Leave" \[ref=(\w+)\]', page)
        assert edit, page
        assert leave, page
        ok_text(await host.dispatch("browser_click", {"ref": edit.group(1)}, session))
        clicked = ok_text(await host.dispatch("browser_click", {"ref": leave.group(1)}, session))
        back = ok_text(await host.dispatch("browser_back", {}, session))
        edit = re.search(r'button "Edit" \[ref=(\w+)\]', back)
        assert edit, back
        ok_text(await host.dispatch("browser_click", {"ref": edit.group(1)}, session))
        navigated = await host.dispatch("browser_navigate", {"url": site.at("/about")}, session)

    assert 'heading "About us"' in clicked
    assert "beforeunload dialog" in clicked
    assert "page: 'Stay'" in back
    assert 'heading "About us"' in ok_text(navigated)


async def test_going_back_to_a_page_that_no_longer_loads_stops_and_the_page_can_be_read(
    host_factory: Any, site: Site
) -> None:
    host = host_factory(browser_config(navigation_timeout=2, action_timeout=30))
    async with host.session() as session:
        ok_text(await host.dispatch("browser_navigate", {"url": site.at("/once")}, session))
        ok_text(await host.dispatch("browser_navigate", {"url": site.at("/about")}, session))
        back = await host.dispatch("browser_back", {}, session)
        snapshot = await host.dispatch("browser_snapshot", {}, session)

    assert back.error_code == "TOOL_ERROR"
    assert "going back timed out" in back.text_content
    assert "loading was stopped" in back.text_content, back.text_content
    assert 'heading "About us"' in ok_text(snapshot)


async def test_a_page_opening_dialogs_without_end_cannot_hold_a_navigation_away(
    host_factory: Any, site: Site
) -> None:
    # Playwright's goto waited past its own timeout there: the call ran into the host's limit
    # (TIMEOUT, 41 s here), and the next navigation was cut short by the one left going.
    host = host_factory(browser_config(navigation_timeout=3, action_timeout=5))
    async with host.session() as session:
        leaving = []
        for _ in range(2):
            ok_text(await host.dispatch("browser_navigate", {"url": site.at("/alerts")}, session))
            leaving.append(
                await host.dispatch("browser_navigate", {"url": site.at("/about")}, session)
            )
        after = await host.dispatch("browser_navigate", {"url": site.at("/about")}, session)

    for result in leaving:
        assert result.error_code != "TIMEOUT", result.text_content
        if result.is_error:  # said, with what to do
            assert "call browser_navigate" in result.text_content, result.text_content
    assert 'heading "About us"' in ok_text(after)
