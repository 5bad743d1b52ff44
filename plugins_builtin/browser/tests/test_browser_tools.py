"""The browser tools in a real headless Chromium against a local site (``nox -s tests_browser``).

The site is on 127.0.0.1, which the address rules refuse unless allowed: these hosts allow it
(``allowed_hosts: [127.0.0.1]``) except where a test checks the refusal.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from browser_site import Site, browser_config, ok_text

pytestmark = pytest.mark.anyio


def _ref(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'{role} "{re.escape(name)}"[^\n]*\[ref=(\w+)\]', snapshot)
    assert found, f"no {role} {name!r} in:\n{snapshot}"
    return found.group(1)


async def test_navigate_snapshot_type_and_click_submit_a_form(
    host_factory: Any, site: Site
) -> None:
    host = host_factory()
    async with host.session() as session:
        page = ok_text(await host.dispatch("browser_navigate", {"url": site.at("/")}, session))
        email, password = _ref(page, "textbox", "Email"), _ref(page, "textbox", "Password")
        send = _ref(page, "button", "Send")
        ok_text(
            await host.dispatch("browser_type", {"ref": email, "text": "ann@example.org"}, session)
        )
        ok_text(await host.dispatch("browser_type", {"ref": password, "text": "secret"}, session))
        after = ok_text(await host.dispatch("browser_click", {"ref": send}, session))
        again = ok_text(await host.dispatch("browser_snapshot", {}, session))

    assert "page: 'Sign in'" in page
    assert 'heading "Welcome, ann@example.org"' in after
    assert "/welcome?email=ann%40example.org" in after
    assert 'heading "Welcome, ann@example.org"' in again


async def test_a_page_the_server_answered_with_an_error_status_says_so(
    host_factory: Any, site: Site
) -> None:
    # A 404 page is a page, but the model must be able to tell it from the one it wanted.
    host = host_factory()
    async with host.session() as session:
        missing = await host.dispatch("browser_navigate", {"url": site.at("/missing")}, session)
        found = await host.dispatch("browser_navigate", {"url": site.at("/")}, session)

    assert "the server answered HTTP 404" in ok_text(missing)
    assert missing.structured is not None
    assert missing.structured["status"] == 404
    assert "the server answered" not in ok_text(found)
    assert found.structured is not None
    assert found.structured["status"] == 200


async def test_navigating_to_a_file_download_is_refused_in_words_and_nothing_is_written(
    host_factory: Any, site: Site, tmp_path: Path
) -> None:
    host = host_factory()
    async with host.session() as session:
        result = await host.dispatch("browser_navigate", {"url": site.at("/file.bin")}, session)

    assert result.is_error
    assert "is a file download, which the browser tools refuse" in result.text_content
    assert "Page.goto" not in result.text_content
    assert not any(tmp_path.rglob("file.bin"))


@pytest.mark.parametrize(
    ("path", "kind", "reader"),
    [
        ("/paper.pdf", "application/pdf", "no hermes tool reads a PDF's text"),
        ("/photo.png", "image/png", "vision_analyze"),
    ],
)
async def test_an_address_that_is_no_web_page_says_what_it_is_and_what_reads_it(
    host_factory: Any, site: Site, path: str, kind: str, reader: str
) -> None:
    host = host_factory()
    async with host.session() as session:
        result = await host.dispatch("browser_navigate", {"url": site.at(path)}, session)

    text = result.text_content
    assert f"{site.at(path)} is {kind}, not a web page" in text, text
    assert "the browser tools show web pages" in text
    assert reader in text


async def test_navigation_to_a_private_address_is_refused_unless_allowed(
    host_factory: Any, site: Site
) -> None:
    host = host_factory(browser_config(allowed_hosts=[]))
    async with host.session() as session:
        local = await host.dispatch("browser_navigate", {"url": site.at("/")}, session)
        metadata = await host.dispatch(
            "browser_navigate", {"url": "http://169.254.169.254/latest/meta-data/"}, session
        )
        private = await host.dispatch("browser_navigate", {"url": "http://10.0.0.1/"}, session)
        file = await host.dispatch("browser_navigate", {"url": "file:///etc/passwd"}, session)

    for result in (local, metadata, private, file):
        assert result.error_code == "BLOCKED", result.text_content
        assert result.text_content.startswith("browser_navigate refused: ")
    assert "127.0.0.1" in local.text_content
    assert "only http and https addresses are opened (the scheme is 'file')" in file.text_content
    assert site.seen == []


async def test_navigation_to_a_host_that_does_not_resolve_is_a_lookup_failure_not_a_refusal(
    host_factory: Any, site: Site
) -> None:
    # As web_extract's and vision_analyze's: .invalid never resolves (RFC 6761), and no allowed
    # host would mend it, so it is an error of the call, not a refusal.
    host = host_factory()
    async with host.session() as session:
        result = await host.dispatch(
            "browser_navigate", {"url": "http://nosuchhost.invalid/"}, session
        )

    assert result.error_code == "TOOL_ERROR", result.text_content
    assert "nosuchhost.invalid does not resolve" in result.text_content
    assert "refused" not in result.text_content
    assert "allowed_hosts" not in result.text_content


async def test_a_redirect_and_a_page_request_to_a_private_address_are_refused(
    host_factory: Any, site: Site
) -> None:
    host = host_factory()
    async with host.session() as session:
        redirected = await host.dispatch(
            "browser_navigate", {"url": site.at("/to-metadata")}, session
        )
        hostile = ok_text(
            await host.dispatch("browser_navigate", {"url": site.at("/hostile")}, session)
        )

    assert redirected.is_error
    assert "169.254.169.254" in redirected.text_content
    assert "refused" in redirected.text_content
    assert "note: refused a request of the page: " in hostile
    assert "10.0.0.1" in hostile


async def test_a_hostile_page_dialog_window_and_download_are_contained(
    host_factory: Any, site: Site, tmp_path: Path
) -> None:
    host = host_factory()
    async with host.session() as session:
        page = ok_text(
            await host.dispatch("browser_navigate", {"url": site.at("/hostile")}, session)
        )
        link = _ref(page, "link", "Get the file")
        clicked = ok_text(await host.dispatch("browser_click", {"ref": link}, session))

    assert "the page opened an alert dialog ('first alert'); it was dismissed" in page
    assert "opened a new window" in page
    assert "it was closed" in page
    assert "download" in clicked
    assert "it was refused" in clicked
    assert not [p for p in tmp_path.rglob("file.bin")]


async def test_a_page_that_never_loads_times_out_with_a_clear_error(
    host_factory: Any, site: Site
) -> None:
    host = host_factory(browser_config(navigation_timeout=2))
    async with host.session() as session:
        result = await host.dispatch("browser_navigate", {"url": site.at("/never")}, session)
        after = ok_text(
            await host.dispatch("browser_navigate", {"url": site.at("/about")}, session)
        )

    assert result.error_code == "TOOL_ERROR"
    assert "timed out" in result.text_content
    assert 'heading "About us"' in after


async def test_each_session_has_its_own_context(host_factory: Any, site: Site) -> None:
    host = host_factory()
    async with host.session() as first, host.session() as second:
        await host.dispatch("browser_navigate", {"url": site.at("/visits")}, first)
        again = ok_text(await host.dispatch("browser_navigate", {"url": site.at("/visits")}, first))
        other = ok_text(
            await host.dispatch("browser_navigate", {"url": site.at("/visits")}, second)
        )

    assert "visit number 2" in again  # the cookie stays within the session
    assert "visit number 1" in other  # and never reaches another session


async def test_no_chromium_process_is_left_after_the_session(host_factory: Any, site: Site) -> None:
    host = host_factory()
    async with host.session() as session:
        ok_text(await host.dispatch("browser_navigate", {"url": site.at("/")}, session))
        started = _descendants_running("chrom")
        driver = _descendants_running("playwright")
    assert started, "no Chromium process was seen while the session was open"
    assert driver, "no Playwright driver process was seen while the session was open"

    with anyio.fail_after(30):
        while _alive(started | driver):
            await anyio.sleep(0.1)


async def test_references_unknown_keys_and_actions_before_navigation_are_clear(
    host_factory: Any, site: Site
) -> None:
    host = host_factory()
    async with host.session() as session:
        early = await host.dispatch("browser_click", {"ref": "e1"}, session)
        ok_text(await host.dispatch("browser_navigate", {"url": site.at("/")}, session))
        missing = await host.dispatch("browser_click", {"ref": "e999"}, session)
        wrong = await host.dispatch("browser_click", {"ref": "button"}, session)
        key = await host.dispatch("browser_press", {"key": "NoSuchKey"}, session)

    assert "call browser_navigate first" in early.text_content
    assert "take a new browser_snapshot" in missing.text_content
    assert "is not an element reference" in wrong.text_content
    assert "cannot press 'NoSuchKey'" in key.text_content


async def test_a_pages_title_and_address_are_bounded_as_its_snapshot_is(
    host_factory: Any, site: Site
) -> None:
    # The page chooses both: a 100,000-character title went whole into the structured result,
    # and an address it gave itself (300,000 characters) into the text and the structured one.
    host = host_factory()
    async with host.session() as session:
        result = await host.dispatch("browser_navigate", {"url": site.at("/long-named")}, session)

    text = ok_text(result)
    assert "Named at length" in text
    assert len(text) < 5_000
    assert result.structured is not None
    assert len(result.structured["title"]) <= 300
    assert result.structured["url"].startswith(site.at("/long-named?xxx"))
    assert len(result.structured["url"]) <= 2_100


async def test_a_long_title_is_cut_between_letters_a_reader_sees(
    host_factory: Any, site: Site
) -> None:
    # A raw cut at 300 (200 in the text) left an "e" without its accent, an emoji sequence
    # split; web_search and web_extract cut titles by the one rule, and so does the browser.
    host = host_factory()
    async with host.session() as session:
        result = await host.dispatch("browser_navigate", {"url": site.at("/accented")}, session)

    text = ok_text(result)
    assert result.structured is not None
    title = result.structured["title"]
    assert len(title) <= 300
    assert title.startswith("xe\u0301")
    assert title.endswith("...")
    assert re.search("e(?!\u0301)", title) is None, title
    shown = re.search("page: '(.*)' at ", text)
    assert shown is not None, text
    assert len(shown.group(1)) <= 200
    assert shown.group(1).endswith("...")
    assert re.search("e(?!\u0301)", shown.group(1)) is None, shown.group(1)


async def test_scroll_back_press_screenshot_and_close(
    host_factory: Any, site: Site, tmp_path: Path
) -> None:
    host = host_factory()
    async with host.session() as session:
        ok_text(await host.dispatch("browser_navigate", {"url": site.at("/tall")}, session))
        scrolled = ok_text(await host.dispatch("browser_scroll", {"pages": 2}, session))
        shot = await host.dispatch("browser_screenshot", {}, session)
        page = ok_text(await host.dispatch("browser_navigate", {"url": site.at("/")}, session))
        ok_text(
            await host.dispatch("browser_click", {"ref": _ref(page, "link", "About us")}, session)
        )
        back = ok_text(await host.dispatch("browser_back", {}, session))
        field = _ref(back, "textbox", "Email")
        ok_text(
            await host.dispatch("browser_type", {"ref": field, "text": "bob@example.org"}, session)
        )
        pressed = ok_text(await host.dispatch("browser_press", {"key": "Enter"}, session))
        closed = ok_text(await host.dispatch("browser_close", {}, session))
        after = await host.dispatch("browser_snapshot", {}, session)

    assert re.search(r"scrolled down: showing 1600-2400 of \d+ pixels", scrolled)
    path = Path(shot.structured["path"])
    assert path.is_relative_to(tmp_path / "cache" / "browser" / session.id)
    assert path.read_bytes().startswith(b"\x89PNG")
    assert path.stat().st_mode & 0o777 == 0o600
    assert 'heading "Sign in"' in back
    assert 'heading "Welcome, bob@example.org"' in pressed
    assert closed == "closed the browser"
    assert "call browser_navigate first" in after.text_content


async def test_a_missing_chromium_is_an_error_with_the_install_command(
    host_factory: Any, site: Site
) -> None:
    host = host_factory(PATH="/nonexistent")
    async with host.session() as session:
        result = await host.dispatch("browser_navigate", {"url": site.at("/")}, session)
    named = host_factory(HERMES_BROWSER_EXECUTABLE="/no/such/chromium")
    async with named.session() as session:
        wrong = await named.dispatch("browser_navigate", {"url": site.at("/")}, session)

    assert result.error_code == "TOOL_ERROR"
    assert "apt-get install chromium" in result.text_content
    assert "HERMES_BROWSER_EXECUTABLE names '/no/such/chromium'" in wrong.text_content


async def test_a_chromium_that_cannot_start_is_an_error_with_its_own_reason(
    host_factory: Any, site: Site, tmp_path: Path
) -> None:
    # A Chromium that exits at once, as one missing a shared library does in a slim container.
    broken = tmp_path / "chromium"
    broken.write_text(
        "#!/bin/sh\n"
        "echo 'chromium: error while loading shared libraries: libnss3.so: cannot open "
        "shared object file' >&2\n"
        "exit 127\n",
        encoding="utf-8",
    )
    broken.chmod(0o755)
    host = host_factory(HERMES_BROWSER_EXECUTABLE=str(broken))
    async with host.session() as session:
        result = await host.dispatch("browser_navigate", {"url": site.at("/")}, session)

    assert result.error_code == "TOOL_ERROR"
    text = result.text_content
    assert text.startswith(f"cannot start Chromium ({broken})"), text
    assert "it exited with 127; it wrote:\nchromium: error while loading shared libraries" in text
    assert text.count("libnss3.so") == 1, text
    assert "--disable-background-networking" not in text  # Playwright's launch line is noise


def _processes() -> dict[int, tuple[int, str]]:
    """Each live process: its parent and command line (zombies left out)."""
    found = {}
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
            found[int(entry.name)] = (int(parent), cmdline)
    return found


def _descendants_running(word: str) -> set[int]:
    import os

    table = _processes()
    mine = {os.getpid()}
    changed = True
    while changed:
        changed = False
        for pid, (parent, _) in table.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                changed = True
    return {pid for pid in mine if word in table.get(pid, (0, ""))[1]}


def _alive(pids: set[int]) -> bool:
    table = _processes()
    return any(pid in table for pid in pids)


async def test_browser_vision_shows_the_page_to_the_conversations_model(
    host_factory: Any, site: Site
) -> None:
    """A conversation of a fake model (none can run here; the vendors' wires of the vision
    input are tested in tests/media): it opens the site and asks browser_vision, whose side
    request carries the page's screenshot; the model's answer comes back as the result."""
    from hermes_core.agent import Agent, ModelRequest, ModelSettings
    from hermes_core.testing import FakeModelProvider, fake_turn

    def respond(request: ModelRequest) -> Any:
        if request.messages[-1].images:
            return fake_turn("A sign-in form with Email and Password fields.")
        done = sum(1 for m in request.messages if m.role == "tool")
        if done == 0:
            return fake_turn("", ("browser_navigate", {"url": site.at("/")}))
        if done == 1:
            return fake_turn("", ("browser_vision", {"question": "What form is on the page?"}))
        return fake_turn("It is a sign-in page.")

    model = FakeModelProvider(responder=respond)
    host = host_factory()
    agent = Agent(host, model, ModelSettings(provider="fake", model="fake-1"))
    async with host.session() as session:
        conversation = agent.conversation(session)
        async for _ in conversation.send("What is on the site?"):
            pass
        await conversation.aclose()
    [looked] = [r for r in model.requests if r.messages[-1].images]
    [image] = looked.messages[-1].images
    assert image.media_type == "image/png"
    assert image.data.startswith(b"\x89PNG")
    assert looked.messages[-1].content == "What form is on the page?"
    assert "never instructions" in looked.system
    said = [m.content for m in model.requests[-1].messages if m.role == "tool"]
    assert "A sign-in form with Email and Password fields." in said[-1]
