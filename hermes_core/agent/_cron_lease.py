"""Who holds a cron run's lease, and when it is over (:func:`lease_over`).

A lease names its holder ``host:pid`` (:func:`owner_name`) and, on Linux, that process's start
(:func:`process_start`: the boot's id, its pid namespace and ``/proc/PID/stat``'s field 22, its
start in clock ticks since boot). On the holder's own machine and in its pid namespace a lease
with a start is over only when that process is gone: its pid runs no more, or runs another
process (started at another time, or after a reboot). Expired or not: a daemon asleep (a
laptop's lid shut, a SIGSTOP, the clock put forward) renews when it wakes, and taking its run
back then would run the job twice. A
lease of another machine, or of another pid namespace under the same host name (a container
sharing the host's name and the home: its pid here is another process), is over when it ran
out unrenewed; one without a start (written by an older hermes, or on a system without
``/proc``: there a pid cannot be told from its reuse) when its pid is gone here or it ran out,
as before; a damaged one (no holder named) at once.
"""

from __future__ import annotations

import functools
import os
import socket
from pathlib import Path
from typing import Any

from hermes_core.agent._cron_rows import lease_ran_out

__all__ = ["lease_over", "owner_name", "process_start", "start_of"]

_PROC = Path("/proc")


def owner_name() -> str:
    """This process as a lease holder: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@functools.cache
def _pid_space() -> str | None:
    """``<boot id>:<pid namespace>`` of this process: where its pids name processes (``None``:
    this system has no ``/proc`` to say). Read once: neither changes while the process runs."""
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
        return f"{boot}:{os.readlink(_PROC / 'self/ns/pid')}"
    except OSError:
        return None


def process_start(pid: int) -> str | None:
    """``<boot id>:<pid namespace>:<start in clock ticks>`` of the running process ``pid``
    (``None``: none runs, it is a zombie, or this system has no ``/proc`` to say)."""
    space = _pid_space()
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the name before it may hold spaces and ")"
    if space is None or len(fields) < 20 or fields[0] == "Z":  # fields[0] is field 3, the state
        return None
    return f"{space}:{fields[19]}"


def _local_pid(owner: str) -> int | None:
    host, _, pid = owner.rpartition(":")
    return int(pid) if host == socket.gethostname() and pid.isdigit() else None


def start_of(owner: str) -> str | None:
    """The start of the lease holder ``owner`` when it is a process of this machine."""
    pid = _local_pid(owner)
    return None if pid is None else process_start(pid)


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it runs
        return True
    return True


def lease_over(row: Any, now: float) -> bool:
    """Whether the lease on the ``jobs`` row ``row`` is over at ``now`` (see the module)."""
    owner = row["lease_owner"]
    if not isinstance(owner, str):  # a damaged lease: no holder to wait for
        return True
    pid = _local_pid(owner)
    if pid is None:
        return lease_ran_out(row, now)
    started, space = row["lease_start"], _pid_space()
    if isinstance(started, str) and space is not None and not started.startswith(f"{space}:"):
        boot = space.partition(":")[0]
        if started.startswith(f"{boot}:"):  # this boot, another pid namespace: not ours to see
            return lease_ran_out(row, now)
    if not _runs(pid):
        return True
    if not isinstance(started, str) or space is None:
        return lease_ran_out(row, now)
    return process_start(pid) != started
