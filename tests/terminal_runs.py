"""A ``hermes`` command run with its output on a pseudo-terminal, for the tests of what it
draws there (and never into a pipe)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from hermes_core.testing import HermesCli


def run_on_terminal(cli: HermesCli, *args: str, stdout_too: bool = True) -> tuple[str, str]:
    """``hermes *args`` with stderr on a pseudo-terminal, and stdout too unless ``stdout_too``
    is false (then into a pipe): what it drew on the terminal, and what it printed to the pipe
    (empty when stdout is the terminal)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        cli.command(*args),
        cwd=cli.work,
        env=cli.variables(TERM="xterm", COLUMNS="120"),
        stdin=subprocess.DEVNULL,
        stdout=terminal if stdout_too else subprocess.PIPE,
        stderr=terminal,
    )
    os.close(terminal)
    seen = b""
    give_up = time.monotonic() + 120  # a guard against a hang, not a performance check
    while time.monotonic() < give_up:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    printed, _ = process.communicate(timeout=30)
    os.close(controller)
    return seen.decode(errors="replace"), (printed or b"").decode()
