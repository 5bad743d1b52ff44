"""``hermes tools call browser_navigate`` as a user runs it: a real subprocess, whose session's
end takes its Chromium with it (the process boundary is the point)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

from browser_site import Site

from hermes_core.testing import HermesCli


def _running_under(folder: Path) -> list[str]:
    """Command lines of live processes that name ``folder`` (Chromium's profile lies in it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z" and str(folder) in cmdline:
            found.append(cmdline)
    return found


def _cli(tmp_path: Path, *browser_lines: str) -> HermesCli:
    """A hermes whose browser may reach 127.0.0.1, approvals off, and ``browser_lines`` more
    keys of ``plugins.entries.browser``."""
    cli = HermesCli(tmp_path)
    cli.user_home.mkdir()  # Chromium writes its settings under HOME, as a user's does
    more = "".join(f"      {line}\n" for line in browser_lines)
    cli.config.write_text(
        "plugins:\n  entries:\n    browser:\n      allowed_hosts: [127.0.0.1]\n"
        f"{more}approvals:\n  policy: 'off'\n",
        encoding="utf-8",
    )
    return cli


def test_hermes_tools_call_opens_a_page_and_leaves_no_chromium(
    tmp_path: Path, site: Site, chromium: str
) -> None:
    cli = _cli(tmp_path)
    # Playwright puts Chromium's profile under TMPDIR; a short one: Chromium makes a Unix
    # socket in the profile, and a socket's path has at most 107 bytes.
    scratch = Path(tempfile.mkdtemp(prefix="hermes-browser-"))
    try:
        done = cli.run(
            "tools",
            "call",
            "browser_navigate",
            f'{{"url": "{site.at("/")}"}}',
            env=cli.variables(TMPDIR=str(scratch)),
        )
        deadline = time.monotonic() + 30  # a generous bound on processes exiting, not a timing
        while _running_under(scratch) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _running_under(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    assert 'textbox "Email"' in done.stdout
    assert left == []


def test_a_page_still_loading_when_the_session_ends_prints_no_traceback(
    tmp_path: Path, site: Site, chromium: str
) -> None:
    # The page never answers: its request is still in the session's address proxy when the
    # navigation times out and the command's session ends, closing the proxy under it.
    cli = _cli(tmp_path, "navigation_timeout: 1")
    scratch = Path(tempfile.mkdtemp(prefix="hermes-browser-"))
    try:
        done = cli.run(
            "tools",
            "call",
            "browser_navigate",
            f'{{"url": "{site.at("/never")}"}}',
            ok=False,
            env=cli.variables(TMPDIR=str(scratch)),
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    assert done.returncode == 1
    assert "timed out" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "Exception in callback" not in done.stderr, done.stderr


def test_a_page_of_lone_surrogates_is_printed_through_a_pipe_and_as_json(
    tmp_path: Path, site: Site, chromium: str
) -> None:
    # A page's text may hold half a UTF-16 pair, which no UTF-8 output holds: the command
    # ended in a UnicodeEncodeError traceback, printing nothing of the page.
    cli = _cli(tmp_path)
    scratch = Path(tempfile.mkdtemp(prefix="hermes-browser-"))
    arguments = f'{{"url": "{site.at("/surrogates")}"}}'
    try:
        env = cli.variables(TMPDIR=str(scratch))
        text = cli.run("tools", "call", "browser_navigate", arguments, ok=False, env=env)
        data = cli.run("tools", "call", "--json", "browser_navigate", arguments, ok=False, env=env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    for done in (text, data):
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
    assert "para \ufffd end" in text.stdout
    assert "title \ufffd lone" in json.loads(data.stdout)["structured"]["title"]
