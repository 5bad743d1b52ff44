"""A navigation that Chromium ends with a network error (a redirect to a refused https address,
or to a ``file:`` or ``data:`` one): the result says why, and the next navigation loads."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from browser_site import Site, ok_text

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/to-metadata-tls", "169.254.169.254 is a cloud metadata address"),
        ("/to-file", "redirects to an address that is not http or https"),
        ("/to-data", "redirects to an address that is not http or https"),
    ],
)
async def test_a_navigation_ended_by_a_network_error_says_why_and_the_next_one_loads(
    host_factory: Any, site: Site, path: str, said: str
) -> None:
    # Chromium shows its own error page a moment after the failed navigation: the next
    # browser_navigate failed, 'interrupted by another navigation to chrome-error://'.
    host = host_factory()
    async with host.session() as session:
        refused = await host.dispatch("browser_navigate", {"url": site.at(path)}, session)
        after = await host.dispatch("browser_navigate", {"url": site.at("/about")}, session)

    assert refused.error_code == "BLOCKED", refused.text_content
    assert refused.text_content.startswith(f"loading {site.at(path)} was refused: ")
    assert said in refused.text_content
    assert "ERR_UNSAFE_REDIRECT" not in refused.text_content
    assert 'heading "About us"' in ok_text(after)


async def test_a_websocket_of_the_page_to_a_refused_address_is_noted(
    host_factory: Any, site: Site
) -> None:
    # Refused by the proxy as every request is, but said nowhere: a WebSocket's failure is no
    # failed request to Playwright.
    host = host_factory()
    async with host.session() as session:
        said = ok_text(
            await host.dispatch("browser_navigate", {"url": site.at("/sockets")}, session)
        )
        with anyio.fail_after(30):
            while "10.0.0.2" not in said or "169.254.169.254" not in said:
                said += ok_text(await host.dispatch("browser_snapshot", {}, session))
                await anyio.sleep(0.2)

    assert "note: refused a request of the page: " in said
