"""What the tests of a non-root account need: a way to run as one, and an interpreter that
account can start, again and again, with this environment's packages.

Root reads every process's files, so a test of what a script cannot read runs hermes as a
non-root user: as ``nobody`` through ``setpriv`` when the suite runs as root (as CI does), as
the current user otherwise (the ``non_root`` fixture of conftest.py). A virtualenv made from a
Python under a private home (pyenv in ``/root``, which is ``0700``) cannot be started by
``nobody``: the script runner's ``sys.executable`` fails with "Permission denied". Then a small
virtualenv is made in a world-readable temporary directory from a Python of the same version
that ``nobody`` can start, and it sees this environment's packages through a ``.pth`` file.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
from dataclasses import dataclass

import pytest

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
AS_ROOT = os.geteuid() == 0
"""Whether the suite runs as root, the only user that can act as another account (``nobody``).
As any other user (a developer running ``nox``), ``setpriv`` fails, and a check that another
account cannot do something would pass without having tried."""
needs_another_account = pytest.mark.skipif(
    not AS_ROOT,
    reason="acts as another local account (nobody), which only root can; CI runs the suite as root",
)
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
# A child of a child: what a script runner does with sys.executable.
_STARTS_ITSELF = (
    "import subprocess, sys; "
    "subprocess.run([sys.executable, '-c', 'import sys; print(sys.version_info[:2])'], check=True)"
)


def nobody_can_run(python: str) -> bool:
    """Whether ``nobody`` can start ``python`` and it can start itself again."""
    try:
        done = subprocess.run(
            [*AS_NOBODY, python, "-c", _STARTS_ITSELF],
            cwd="/",
            capture_output=True,
            text=True,
            timeout=60,
        )
    except OSError:
        return False
    expected = f"({sys.version_info.major}, {sys.version_info.minor})"
    return done.returncode == 0 and done.stdout.strip() == expected


def candidates() -> list[str]:
    """This interpreter, then the system's of the same version."""
    found = [sys.executable]
    for name in (f"/usr/bin/python{VERSION}", f"/usr/local/bin/python{VERSION}"):
        if os.path.exists(name):
            found.append(name)
    return found


@dataclass(frozen=True)
class NonRoot:
    """How to start a program as a non-root user: ``[*prefix, python, ...]``."""

    prefix: list[str]
    python: str


def site_dirs() -> list[str]:
    """This environment's package directories."""
    return [path for path in site.getsitepackages() if os.path.isdir(path)]
