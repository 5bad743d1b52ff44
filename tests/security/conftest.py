"""The fixture of the tests that run as a non-root account (see accounts.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from accounts import AS_NOBODY, VERSION, NonRoot, candidates, nobody_can_run, site_dirs


@pytest.fixture(scope="session")
def non_root() -> Iterator[NonRoot]:
    """As root: ``setpriv`` to ``nobody`` and an interpreter ``nobody`` can start (and that can
    start itself), with this environment's packages; fails with what to install when there is
    none. As another user: that user and this interpreter."""
    if os.geteuid() != 0:
        yield NonRoot([], sys.executable)
        return
    if shutil.which("setpriv") is None:
        pytest.fail("dropping to the user nobody needs setpriv: apt-get install util-linux")
    if nobody_can_run(sys.executable):
        yield NonRoot(AS_NOBODY, sys.executable)
        return
    root = Path(tempfile.mkdtemp(prefix="hermes-nobody-python-", dir="/tmp"))
    os.chmod(root, 0o755)
    try:
        for base in candidates()[1:]:
            target = root / Path(base).name
            made = subprocess.run(
                [base, "-m", "venv", "--without-pip", str(target)], capture_output=True
            )
            if made.returncode != 0:
                continue
            lines = "".join(f"import site; site.addsitedir({path!r})\n" for path in site_dirs())
            for packages in (target / "lib").glob("python*/site-packages"):
                (packages / "_hermes_test_parent.pth").write_text(lines, encoding="utf-8")
            python = str(target / "bin" / "python")
            if nobody_can_run(python):
                yield NonRoot(AS_NOBODY, python)
                return
        pytest.fail(
            f"no Python {VERSION} that the user nobody can start: {sys.executable} lies under a "
            f"private directory; install one outside it (apt-get install python{VERSION})"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
