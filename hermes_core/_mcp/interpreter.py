"""Which Python a stdio server's ``python3`` means.

A bare ``python3`` is looked up on the ``PATH`` of whoever starts hermes: from a shell with a
virtual environment active that is the environment's Python, from Claude Desktop (which starts
hermes by its full path, with a small ``PATH``) usually the system one, which lacks the server's
package. ``hermes mcp add`` therefore stores the absolute path it finds when the server is added,
and a failed connect names the interpreter that ran.
"""

from __future__ import annotations

import re
import shutil
from pathlib import PurePath

__all__ = ["find_command", "is_python", "resolve_bare_python"]

_PYTHON = re.compile(r"python[0-9.]*")


def is_python(command: str) -> bool:
    """Whether ``command`` names a Python (``python``, ``python3``, ``/x/python3.12``)."""
    return _PYTHON.fullmatch(PurePath(command).name) is not None


def find_command(command: str, path: str | None) -> str:
    """``command`` as found on ``path`` (an absolute path), or ``command`` itself when it is not
    found there. Symbolic links are kept: a virtual environment's ``python3`` is a link to the
    base interpreter, but it is the environment's own."""
    return shutil.which(command, path=path) or command


def resolve_bare_python(command: str, path: str | None) -> str | None:
    """The absolute path of a bare ``python``/``python3`` command found on ``path``; ``None`` for
    any other command, a path, or an interpreter that is not on ``path``."""
    if "/" in command or "\\" in command or not is_python(command):
        return None
    return shutil.which(command, path=path)
