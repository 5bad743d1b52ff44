"""The script's process: the runner (``runner.py``), started in a new process group.

A timeout, the user's stop or output past the cap sends SIGTERM to the group; the runner gives
the script the grace period, then kills it and every process it started, also those that left
the group (on Linux; see ``runner.py``), and exits. Should the runner not have ended a little
after that, and whenever it has, the host kills the group. Its stdout and stderr are pipes, read
by :mod:`.capture`.
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

from hermes_core import Session
from hermes_core._plugin_support import signal_group

_POLL_SECONDS = 0.05
"""How often a running script looks at the session's interrupt flag and its output's size."""
_RUNNER_MARGIN = 2.0
"""How long past the grace period the runner may take to kill what is left and exit."""

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
    with anyio.move_on_after(grace + _RUNNER_MARGIN):
        await process.wait()


@asynccontextmanager
async def script_process(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    pass_fds: Sequence[int] = (),
) -> AsyncIterator[Process]:
    """Start ``command`` in a new process group with the descriptors ``pass_fds``, its stdout
    and stderr pipes (an ``OSError`` when it cannot start); on the way out, also when the
    caller is cancelled, no process of the group is left."""
    process = await anyio.open_process(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        pass_fds=pass_fds,
    )
    try:
        yield process
    finally:
        with anyio.CancelScope(shield=True):
            await kill_group(process)
            await process.aclose()


async def kill_group(process: Process) -> None:
    """Kill what is left of the runner's process group (the runner has killed the script's
    processes on Linux; elsewhere ``cmd &`` holds the pipes open) and reap the runner."""
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
    """Wait until the runner exits, ``timeout`` seconds pass, ``session`` is interrupted or
    ``over()`` says the script wrote too much; in the last three cases its group gets SIGTERM,
    and the script ``grace`` seconds to end (the runner ends it then)."""
    ending = await _wait(process, timeout, session, over)
    if ending != "exited":
        await _stop(process, grace)
    return Outcome(ending, process.returncode)
