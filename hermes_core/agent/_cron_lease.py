"""Who holds a cron run's lease, and when it is over (:func:`lease_over`).

A lease names its holder ``host:pid`` (:func:`owner_name`) and, on Linux, that process's start
(:func:`process_start`: the boot's id, its pid namespace and ``/proc/PID/stat``'s field 22, its
start in clock ticks since boot), and when it runs out in this boot's awake time too
(:func:`awake_stamp`: the monotonic clock, which a suspended machine's sleep does not advance).
On the holder's own machine and in its pid namespace a lease with a start is over when that
process is gone (its pid runs no more, or runs another process, started at another time or
after a reboot), or when it renewed no lease for ``cron.lease`` seconds while the machine was
awake: stopped (a SIGSTOP) or stuck. Its wall-clock end alone does not end it: a laptop's lid
shut or the clock put forward runs it out, and the daemon renews when it wakes, where taking its
run back would run the job twice. A lease of another machine, or of another pid namespace under
the same host name (a container sharing the host's name and the home: its pid here is another
process), is over when it ran out unrenewed; one without a start (written by an older hermes,
or on a system without ``/proc``: there a pid cannot be told from its reuse) when its pid is
gone here or it ran out, as before; a damaged one (no holder named) at once. A lease without
an awake end (an older hermes's), or with one another lease wrote (an older hermes's claim
after a newer one's), keeps the rule of its process alone, as before.
"""

from __future__ import annotations

import functools
import os
import socket
import time
from pathlib import Path
from typing import Any

from hermes_core.agent._cron_rows import lease_ran_out

__all__ = ["awake_stamp", "lease_over", "owner_name", "process_start", "start_of"]

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


def awake_stamp(until: float, lease: float) -> str:
    """What a lease running out at ``until`` (wall clock) records of its end in awake time,
    ``lease`` seconds of the monotonic clock from now: ``"<until> <monotonic end>"`` (the
    ``until`` ties it to the lease that wrote it)."""
    return f"{until!r} {time.monotonic() + lease!r}"


def _awake_ran_out(row: Any) -> bool:
    """Whether the lease of ``row`` ran out in this boot's awake time (``False`` when it has no
    awake end of its own: an older hermes's lease)."""
    stamp = row["lease_awake"]
    until, _, end = stamp.partition(" ") if isinstance(stamp, str) else ("", "", "")
    try:
        return float(until) == row["lease_until"] and time.monotonic() > float(end)
    except ValueError:
        return False


def lease_over(row: Any, now: float) -> str | None:
    """Why the lease on the ``jobs`` row ``row`` is over at ``now`` (see the module), in the
    words of its run's log; ``None`` while it holds."""
    owner = row["lease_owner"]
    gone = f"the daemon {owner} stopped during the run (killed or lost)"
    if not isinstance(owner, str):  # a damaged lease: no holder to wait for
        return gone
    pid = _local_pid(owner)
    if pid is None:
        return gone if lease_ran_out(row, now) else None
    started, space = row["lease_start"], _pid_space()
    if isinstance(started, str) and space is not None and not started.startswith(f"{space}:"):
        boot = space.partition(":")[0]
        if started.startswith(f"{boot}:"):  # this boot, another pid namespace: not ours to see
            return gone if lease_ran_out(row, now) else None
    if not _runs(pid):
        return gone
    if not isinstance(started, str) or space is None:
        return gone if lease_ran_out(row, now) else None
    if process_start(pid) != started:
        return gone
    if not _awake_ran_out(row):
        return None
    ran_out = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["lease_until"]))
    return (
        f"the daemon {owner} still runs but renewed no lease for cron.lease seconds while this "
        f"machine was awake (stopped or stuck; its lease ran out at {ran_out}): its run was "
        "taken back, and the job runs again at its next time"
    )
