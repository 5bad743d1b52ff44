"""``browser_screenshot`` of a whole page taller than one image can be: its top, said so."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from browser_site import Site

pytestmark = pytest.mark.anyio


async def test_a_full_page_screenshot_of_a_very_tall_page_is_its_top_said_so(
    host_factory: Any, site: Site
) -> None:
    # It failed with Chromium's "Protocol error (Page.captureScreenshot): Unable to capture
    # screenshot" and Playwright's call log, several lines of it.
    host = host_factory()
    async with host.session() as session:
        await host.dispatch("browser_navigate", {"url": site.at("/very-tall")}, session)
        shot = await host.dispatch("browser_screenshot", {"full_page": True}, session)

    assert not shot.is_error, shot.text_content
    assert "the first 16384 of 600000 pixels" in shot.text_content, shot.text_content
    assert shot.structured is not None
    png = Path(shot.structured["path"]).read_bytes()
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (width, height) == (1280, 16384)
