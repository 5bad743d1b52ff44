"""Which Chromium the browser tools drive, and what to say when there is none.

Playwright cannot download its own browser build on every machine (and a user may not want a
second Chromium), so the tools drive the Chromium the user has: ``plugins.entries.browser.
executable`` when set, else ``HERMES_BROWSER_EXECUTABLE``, else the first of :data:`CANDIDATES`
on ``PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping

__all__ = [
    "CANDIDATES",
    "ENV_VARIABLE",
    "INSTALL_HINT",
    "ChromiumMissing",
    "find_chromium",
    "launch_failure",
]

ENV_VARIABLE = "HERMES_BROWSER_EXECUTABLE"
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = (
    "install one (Debian/Ubuntu: `apt-get install chromium`), or name it with "
    f"plugins.entries.browser.executable or {ENV_VARIABLE}"
)


_BROWSER_SAID = re.compile(r"\[pid=\d+\]\[(?:err|out)\] ?([^\n]*)")
_EXITED = re.compile(r"<process did exit: exitCode=(\w+), signal=(\w+)>")
_SAID_CHARS = 1500


class ChromiumMissing(Exception):
    """No Chromium to drive; the message says what was looked for and how to install one."""


def find_chromium(configured: str | None, variables: Mapping[str, str]) -> str:
    """The Chromium executable to launch: ``configured`` (the config key), else the
    environment variable, else the first candidate on ``PATH`` (``variables["PATH"]``)."""
    for where, given in (
        ("plugins.entries.browser.executable", configured),
        (ENV_VARIABLE, variables.get(ENV_VARIABLE)),
    ):
        if not given:
            continue
        found = shutil.which(given, path=variables.get("PATH", os.defpath))
        if found is None:
            raise ChromiumMissing(f"{where} names {given!r}, which is not an executable")
        return found
    path = variables.get("PATH", os.defpath)
    for name in CANDIDATES:
        found = shutil.which(name, path=path)
        if found is not None:
            return found
    raise ChromiumMissing(
        f"no Chromium found on PATH (looked for {', '.join(CANDIDATES)}): " + INSTALL_HINT
    )


def launch_failure(message: str) -> str:
    """Why the browser did not start, from Playwright's launch error ``message``: how it
    exited and the end of what it wrote, without its command line (2,000 characters of flags
    that came first and hid the reason)."""
    # dict.fromkeys: the message holds the log twice (its "Browser logs" and "Call log").
    lines = dict.fromkeys(line.strip() for line in _BROWSER_SAID.findall(message))
    said = "\n".join(line for line in lines if line)
    exited = _EXITED.search(message)
    parts = []
    if exited is not None:
        code, signal = exited.groups()
        parts.append(f"it was killed by {signal}" if signal != "null" else f"it exited with {code}")
    if said:
        parts.append("it wrote:\n" + said[-_SAID_CHARS:])
    if not parts:  # not the launch log Playwright writes today: its message, less the flags
        kept = [line for line in message.strip().splitlines() if "<launching>" not in line]
        return "\n".join(kept)[:2000]
    return "; ".join(parts)
