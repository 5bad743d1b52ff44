"""Runs one script for ``execute_code``: ``python runner.py DIRECTORY CHANNEL_FD GRACE``.

Two processes. The first is the *reaper*: on Linux it becomes a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``), so every process the script starts stays its descendant
even after leaving the script's process group (``setsid``, a double fork, a daemon); it forks
the second, which runs the script, and waits. When the script ends, on its own or stopped, the
reaper kills every descendant left (found by walking ``/proc``, again until none is left),
then exits with the script's status. SIGTERM (the timeout, the user's stop, output past its
cap: the host signals the whole group) starts ``GRACE`` seconds after which the reaper kills
the script and all it started. Elsewhere than Linux the host's kill of the group is all there is.

The script's process: ``DIRECTORY`` holds ``script.py`` and the generated ``hermes_tools.py``.
The script runs as ``__main__``; when it raises, its traceback (without this file's frame nor
those of ``hermes_tools``) goes to stderr and to ``DIRECTORY/traceback.txt``, and the exit status
is 1. SIGTERM ends the script
as ``sys.exit`` does, so what it printed is flushed. ``CHANNEL_FD`` is its way to the host
(``channel.py``): held by the script only (the reaper closes its copy), and close-on-exec, so
a program the script starts does not get it.
"""

# Runs in the script's interpreter (any Python from 3.8): the standard library only.

from __future__ import annotations

import contextlib
import linecache
import os
import signal
import sys
import time
import traceback
from types import FrameType, TracebackType

SCRIPT_NAME = "<script>"
_PR_SET_CHILD_SUBREAPER = 36
_KILL_ROUNDS = 500
"""How many times the reaper looks for descendants left before it gives up (each round kills
what it finds; a process forking as fast as it can is caught within a few)."""


# The script's process --------------------------------------------------------------------


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _fail(directory: str, text: str) -> None:
    sys.stderr.write(text)
    with open(os.path.join(directory, "traceback.txt"), "w", encoding="utf-8") as handle:
        handle.write(text)
    sys.exit(1)


def run_script(directory: str) -> None:
    """Run ``DIRECTORY/script.py`` as ``__main__`` in this process."""
    sys.path[0] = directory  # hermes_tools, not this file's directory
    sys.argv = [SCRIPT_NAME]
    with open(os.path.join(directory, "script.py"), encoding="utf-8") as handle:
        source = handle.read()
    # Tracebacks show the script's lines under a short name, not a temporary path.
    linecache.cache[SCRIPT_NAME] = (len(source), None, source.splitlines(True), SCRIPT_NAME)
    try:
        code = compile(source, SCRIPT_NAME, "exec")
    except SyntaxError as exc:
        _fail(directory, "".join(traceback.format_exception_only(type(exc), exc)))
        return
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(code, namespace)
    except SystemExit:
        raise
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        _fail(directory, _script_traceback(exc, tb, os.path.join(directory, "hermes_tools.py")))


def _script_traceback(exc: BaseException, tb: TracebackType | None, client: str) -> str:
    """The traceback of ``exc`` without the frames of the generated module ``client``: a
    failed call ends at the script's line that made it, then the ``ToolError``."""
    shown = traceback.TracebackException(type(exc), exc, tb)
    pending, seen = [shown], set()
    while pending:
        each = pending.pop()
        if id(each) in seen:
            continue
        seen.add(id(each))
        kept = [frame for frame in each.stack if frame.filename != client]
        each.stack = traceback.StackSummary.from_list(kept)
        pending += [chained for chained in (each.__cause__, each.__context__) if chained]
    return "".join(shown.format())


# The reaper ------------------------------------------------------------------------------


def _become_subreaper() -> bool:
    """Whether this process now adopts every orphan among its descendants (Linux only)."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _descendants(root: int) -> list[int]:
    """The live (not zombie) processes under ``root``, by the parent ``/proc`` gives each."""
    children: dict[int, list[int]] = {}
    live = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        if fields[0] not in (b"Z", b"X"):
            live.add(pid)
    found, queue = [], [root]
    while queue:
        for child in children.get(queue.pop(), ()):
            found.append(child)
            queue.append(child)
    return [pid for pid in found if pid in live]


_script = 0
"""The pid of the script's process."""
_script_status: int | None = None
"""Its wait status once reaped (a reap in the signal handler must not lose it)."""


def _reaped(pid: int, status: int) -> None:
    global _script_status
    if pid == _script:
        _script_status = status


def _reap_all() -> None:
    """Collect every child that has ended (the script's orphans become this process's)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _reaped(pid, status)


def _kill_descendants() -> None:
    """SIGKILL every process under this one, round after round until none is left."""
    for _ in range(_KILL_ROUNDS):
        left = _descendants(os.getpid())
        if not left:
            break
        for pid in left:
            with contextlib.suppress(OSError):  # ended meanwhile
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.002)
        _reap_all()
    _reap_all()


def _exit_as(status: int) -> None:
    """End this process as the script ended: its exit code, or its signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main() -> None:
    global _script
    directory, channel, grace = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    adopts = _become_subreaper()

    def stopping(signum: int, frame: FrameType | None) -> None:
        # The script has GRACE s to end, from the first SIGTERM: one it sends itself again and
        # again does not put the end off.
        if signal.getitimer(signal.ITIMER_REAL)[0] == 0:
            signal.setitimer(signal.ITIMER_REAL, grace)

    def out_of_time(signum: int, frame: FrameType | None) -> None:
        if adopts:
            _kill_descendants()
        else:
            os.kill(_script, signal.SIGKILL)

    signal.signal(signal.SIGTERM, stopping)
    signal.signal(signal.SIGALRM, out_of_time)
    _script = os.fork()
    if _script == 0:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, _stop)
        os.set_inheritable(channel, False)
        run_script(directory)
        sys.exit(0)
    os.close(channel)
    while _script_status is None:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        _reaped(pid, status)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if adopts:
        _kill_descendants()
    _exit_as(signal.SIGKILL if _script_status is None else _script_status)


if __name__ == "__main__":
    main()
