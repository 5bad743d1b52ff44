"""Signalling a child's whole process group: what MCP stdio servers, terminal commands and
``execute_code`` scripts leave behind is ended with them."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio

_POLL_SECONDS = 0.02


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the process group ``pgid`` (``0`` only checks it); ``False`` when the
    group has no member left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member changed its credentials: it exists, but is not ours to signal
    return True


def group_alive(pgid: int) -> bool:
    """Whether group ``pgid`` still has a member that is not a zombie.

    Signal 0 succeeds while a member exists at all, and an orphan that was killed stays a zombie
    until PID 1 reaps it (some container inits never do), so ``/proc`` is asked where it exists.
    """
    if not signal_group(pgid, 0):
        return False
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


async def end_group(pgid: int, grace: float) -> None:
    """SIGTERM every process of group ``pgid``, then SIGKILL what is left after ``grace``
    seconds (at once when the group empties sooner).

    The leader's pid is the group id (it was started in a new session); a leader that is gone
    does not end the group, which lives on as long as one member does.
    """
    if not signal_group(pgid, signal.SIGTERM):
        return
    with anyio.move_on_after(grace):
        while group_alive(pgid):
            await anyio.sleep(_POLL_SECONDS)
        return
    signal_group(pgid, signal.SIGKILL)


def end_group_blocking(pgid: int, grace: float) -> None:
    """:func:`end_group` for code that may not await: blocks the thread for up to ``grace``
    seconds."""
    if not signal_group(pgid, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        time.sleep(_POLL_SECONDS)
    signal_group(pgid, signal.SIGKILL)
