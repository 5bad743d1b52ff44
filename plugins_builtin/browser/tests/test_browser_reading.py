"""What a result says of a page the snapshot cannot read: a PDF or an image reached by a click
(not only by ``browser_navigate``), and a page of images alone."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_site import Site, ok_text

pytestmark = pytest.mark.anyio


def _ref(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'{role} "{re.escape(name)}"[^\n]*\[ref=(\w+)\]', snapshot)
    assert found, f"no {role} {name!r} in:\n{snapshot}"
    return found.group(1)


@pytest.mark.parametrize(
    ("link", "path", "kind"),
    [("The paper", "/paper.pdf", "application/pdf"), ("The photo", "/photo.png", "image/png")],
)
async def test_a_click_that_opens_a_pdf_or_an_image_says_what_it_is(
    host_factory: Any, site: Site, link: str, path: str, kind: str
) -> None:
    # A click showed Chromium's viewer as "page: '' at .../paper.pdf" and nothing else: a
    # blank page of the site, to the model.
    host = host_factory()
    async with host.session() as session:
        page = ok_text(
            await host.dispatch("browser_navigate", {"url": site.at("/papers")}, session)
        )
        clicked = ok_text(
            await host.dispatch("browser_click", {"ref": _ref(page, "link", link)}, session)
        )
        again = ok_text(await host.dispatch("browser_snapshot", {}, session))
        back = ok_text(await host.dispatch("browser_back", {}, session))

    for text in (clicked, again):
        assert f"{site.at(path)} is {kind}, not a web page" in text, text
    assert "not a web page" not in back
    assert "not a web page" not in page


async def test_a_page_the_snapshot_shows_nothing_of_says_so_and_what_shows_it(
    host_factory: Any, site: Site
) -> None:
    host = host_factory()
    async with host.session() as session:
        result = await host.dispatch("browser_navigate", {"url": site.at("/pictures")}, session)

    text = ok_text(result)
    assert "page: 'Pictures'" in text
    assert "the snapshot shows nothing of this page" in text, text
    assert "browser_vision" in text


async def test_a_file_input_clicked_is_said_to_get_no_file(host_factory: Any, site: Site) -> None:
    # The click went on in silence: nothing said that no file would ever be chosen.
    host = host_factory()
    async with host.session() as session:
        page = ok_text(
            await host.dispatch("browser_navigate", {"url": site.at("/upload")}, session)
        )
        clicked = ok_text(
            await host.dispatch(
                "browser_click", {"ref": _ref(page, "button", "Your file")}, session
            )
        )

    assert "note: the page asked for a file; the browser tools give a page none" in clicked
