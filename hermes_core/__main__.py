"""``python -m hermes_core``: the ``hermes`` command."""

from __future__ import annotations

import os
import sys


def forget_working_directory() -> None:
    """Take off ``sys.path`` the working directory that ``python -m`` put first, so that
    hermes-core imports its dependencies and plugins from where they are installed, as the
    ``hermes`` script does, never a ``click.py`` or a ``*.dist-info`` the project carries.

    (Python has already imported ``hermes_core`` itself by then; ``python -P -m hermes_core``
    keeps the working directory off ``sys.path`` from the start.)
    """
    if sys.flags.safe_path or not sys.path:
        return
    first = sys.path[0]
    if first in ("", os.curdir) or os.path.abspath(first) == os.getcwd():
        del sys.path[0]


if __name__ == "__main__":
    forget_working_directory()
    from hermes_core._cli import run

    run()
