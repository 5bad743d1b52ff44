"""The script's process: started in a new process group, stopped with that whole group.

A timeout or the user's stop sends SIGTERM to the group, then SIGKILL after the grace period;
when the script ends on its own, whatever it left running in its group (``cmd &``) is killed.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import anyio
from anyio.abc import Process

from hermes_core import Session, signal_group

_POLL_SECONDS = 0.05
"""How often a running script looks at the session's interrupt flag."""

Ending = Literal["exited", "timeout", "interrupted"]


@dataclass(frozen=True)
class Outcome:
    """How the script ended and its exit status (negative: the signal that ended it)."""

    ending: Ending
    returncode: int | None


async def _wait(process: Process, timeout: float, session: Session) -> Ending:
    deadline = anyio.current_time() + timeout
    while True:
        remaining = deadline - anyio.current_time()
        if remaining <= 0:
            return "timeout"
        with anyio.move_on_after(min(_POLL_SECONDS, remaining)):
            await process.wait()
            return "exited"
        if session.interrupted:
            return "interrupted"


async def _stop(process: Process, grace: float) -> None:
    signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(grace):
        await process.wait()


@asynccontextmanager
async def script_process(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdout: IO[Any],
    stderr: IO[Any],
) -> AsyncIterator[Process]:
    """Start ``command`` in a new process group (an ``OSError`` when it cannot start); on the
    way out, also when the caller is cancelled, no process of the group is left."""
    process = await anyio.open_process(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        with anyio.CancelScope(shield=True):
            signal_group(process.pid, signal.SIGKILL)
            await process.wait()
            await process.aclose()


async def supervise(process: Process, *, timeout: float, grace: float, session: Session) -> Outcome:
    """Wait until the script exits, ``timeout`` seconds pass or ``session`` is interrupted; in
    the last two cases its group gets SIGTERM, and ``grace`` seconds to end."""
    ending = await _wait(process, timeout, session)
    if ending != "exited":
        await _stop(process, grace)
    return Outcome(ending, process.returncode)
