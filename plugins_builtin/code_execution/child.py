"""The script's process: started in a new process group, stopped with that whole group.

A timeout, the user's stop or output past the cap sends SIGTERM to the group, then SIGKILL after
the grace period; when the script ends on its own, whatever it left running in its group
(``cmd &``) is killed. Its stdout and stderr are pipes, read by :mod:`.capture`.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
from anyio.abc import Process

from hermes_core import Session, signal_group

_POLL_SECONDS = 0.05
"""How often a running script looks at the session's interrupt flag and its output's size."""

Ending = Literal["exited", "timeout", "interrupted", "output_limit"]


@dataclass(frozen=True)
class Outcome:
    """How the script ended and its exit status (negative: the signal that ended it)."""

    ending: Ending
    returncode: int | None


async def _wait(
    process: Process, timeout: float, session: Session, over: Callable[[], bool]
) -> Ending:
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
        if over():
            return "output_limit"


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
) -> AsyncIterator[Process]:
    """Start ``command`` in a new process group, its stdout and stderr pipes (an ``OSError``
    when it cannot start); on the way out, also when the caller is cancelled, no process of
    the group is left."""
    process = await anyio.open_process(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        with anyio.CancelScope(shield=True):
            await end_group(process)
            await process.aclose()


async def end_group(process: Process) -> None:
    """Kill what is left of the script's process group (``cmd &`` holds its pipes open) and
    reap the script."""
    with anyio.CancelScope(shield=True):
        signal_group(process.pid, signal.SIGKILL)
        await process.wait()


async def supervise(
    process: Process,
    *,
    timeout: float,
    grace: float,
    session: Session,
    over: Callable[[], bool],
) -> Outcome:
    """Wait until the script exits, ``timeout`` seconds pass, ``session`` is interrupted or
    ``over()`` says it wrote too much; in the last three cases its group gets SIGTERM, and
    ``grace`` seconds to end."""
    ending = await _wait(process, timeout, session, over)
    if ending != "exited":
        await _stop(process, grace)
    return Outcome(ending, process.returncode)
