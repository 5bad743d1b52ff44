"""A session's Chromium that crashes or is killed between two calls: the next calls say so and
``browser_navigate`` starts a new one, rather than every call failing on the dead one."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from browser_site import Site, ok_text

from hermes_core.plugin import Session
from plugins_builtin.browser import STATE_KEY

pytestmark = pytest.mark.anyio


def _chromium_of_this_test(renderer: bool) -> list[int]:
    """The Chromium processes under this one: its browser process (``--type=`` absent), or
    its page renderers."""
    table: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, parent = stat.rpartition(")")[2].split()[:2]
        if state != "Z":
            table[int(entry.name)] = (int(parent), cmdline)
    mine = {os.getpid()}
    grown = True
    while grown:
        grown = False
        for pid, (parent, _) in table.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                grown = True
    wanted = re.compile(r"--type=renderer" if renderer else r"^(?!.*--type=).*chrom")
    return [pid for pid in mine - {os.getpid()} if wanted.search(table[pid][1])]


@pytest.mark.parametrize("renderer", [False, True], ids=["browser-killed", "renderer-killed"])
async def test_a_killed_chromium_is_said_and_the_next_navigation_starts_a_new_one(
    host_factory: Any, site: Site, renderer: bool
) -> None:
    host = host_factory()
    async with host.session() as session:
        ok_text(await host.dispatch("browser_navigate", {"url": site.at("/visits")}, session))
        await _kill(renderer, session)
        reopened = await host.dispatch("browser_navigate", {"url": site.at("/visits")}, session)
        await _kill(renderer, session)
        snapshot = await host.dispatch("browser_snapshot", {}, session)
        opened = await host.dispatch("browser_navigate", {"url": site.at("/visits")}, session)
        again = await host.dispatch("browser_snapshot", {}, session)

    text = ok_text(reopened)
    assert "visit number 1" in text  # a new browser: the old one's cookie is gone
    assert "crashed or was killed" in text
    assert "a new browser was started" in text
    assert snapshot.error_code == "TOOL_ERROR"
    assert "crashed or was killed" in snapshot.text_content, snapshot.text_content
    assert "call browser_navigate" in snapshot.text_content
    assert "visit number 1" in ok_text(opened)
    assert "visit number 1" in ok_text(again)


async def _kill(renderer: bool, session: Session) -> None:
    """SIGKILL this test's Chromium (or its renderers) and wait until Playwright saw it."""
    killed = _chromium_of_this_test(renderer)
    assert killed, "no Chromium process of this test was found"
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    with anyio.fail_after(30):
        while session.state[STATE_KEY].stopped() is None:
            await anyio.sleep(0.1)
