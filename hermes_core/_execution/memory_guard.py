"""The host's own memory and environment, out of reach of the children it starts.

A child runs as the same user as the host, and on Linux any process of a user may read
``/proc/<pid>/environ`` and ``/proc/<pid>/mem`` of that user's other processes: a script would
find there every secret the scrub of its own environment kept from it. Marking the host
*non-dumpable* (``prctl(PR_SET_DUMPABLE, 0)``) makes those files the kernel's (owned by root,
unreadable to the user) and also refuses a ``ptrace`` attach by the same user; it stays set for
the life of the process, across threads, and is not passed on to programs the host starts
(``execve`` resets it for them). The cost: no core dump of the host, and a debugger or profiler
(``gdb -p``, ``py-spy``) needs root to attach.

``execute_code`` marks the host before its first script starts. Elsewhere than Linux this does
nothing (macOS has no ``/proc``; its ``task_for_pid`` already needs privileges).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from typing import Final

__all__ = ["hide_host_memory"]

_PR_SET_DUMPABLE: Final = 4


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def hide_host_memory() -> bool:
    """Mark this process non-dumpable on Linux (idempotent); ``True`` when it is marked.

    An ``OSError`` names the failure when the kernel refuses, so no script starts with the
    host's memory open to it; elsewhere than Linux, ``False``.
    """
    if not sys.platform.startswith("linux"):
        return False
    libc = _libc()
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl(PR_SET_DUMPABLE, 0) failed: {error}")
    return True
