"""Which Python a stdio server's ``python3`` means.

A bare ``python3`` is looked up on the ``PATH`` of whoever starts hermes: from a shell with a
virtual environment active that is the environment's Python, from Claude Desktop (which starts
hermes by its full path, with a small ``PATH``) usually the system one, which lacks the server's
package. ``hermes mcp add`` therefore stores the absolute path it finds when the server is added,
and a failed connect names the interpreter that ran.

A Python run as ``python -m server`` (or ``-c``) puts its working directory first on
``sys.path``; started in a project whose gate is closed, a server of the user's would import a
module the project plants under the server's name (an ``mcp_server_time.py`` in a cloned
repository). It gets ``PYTHONSAFEPATH=1`` then (:func:`~hermes_core._mcp.launch.project_guard`,
which asks :func:`imports_from_working_directory`), which keeps the working directory off
``sys.path`` (Python 3.11 and later).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    pass

__all__ = [
    "NPM_GLOBAL_CONFIG",
    "SAFE_PATH",
    "clears_environment",
    "env_directory",
    "find_command",
    "ignores_environment",
    "imports_from_working_directory",
    "install_remedy",
    "is_python",
    "module_run",
    "npm_global_config",
    "resolve_bare_python",
    "run_by_env",
    "split_by_env",
]

SAFE_PATH: Final = "PYTHONSAFEPATH"
"""Python's variable that keeps the working directory off ``sys.path`` (``-P``)."""

NPM_GLOBAL_CONFIG: Final = "npm_config_globalconfig"
"""npm's variable that names its global configuration file (a guarded ``npx`` gets it)."""


def npm_global_config(path: str | None) -> str | None:
    """The global npmrc npm reads where it is not given ``--prefix``: ``PREFIX/etc/npmrc``,
    ``PREFIX`` the folder above that of the ``node`` on ``path`` (links followed, as npm finds
    it), when there is one. ``npx --prefix ~`` (:func:`~hermes_core._mcp.launch.project_guard`)
    would read ``~/etc/npmrc`` in its place and lose a company's ``cafile``, registry or proxy."""
    node = shutil.which("node", path=path)
    if node is None:
        return None
    config = Path(os.path.realpath(node)).parent.parent / "etc" / "npmrc"
    return str(config) if config.is_file() else None


_PYTHON = re.compile(r"(?i)(?:python[0-9.]*|py)(?:\.exe)?")
_ENV: Final = frozenset({"env", "env.exe"})
_ENV_TAKING_VALUE: Final = frozenset({"-u", "--unset", "-C", "--chdir"})


def is_python(command: str) -> bool:
    """Whether ``command`` names a Python (``python``, ``python3``, ``/x/python3.12``,
    ``python.exe``, Windows' launcher ``py``)."""
    return _PYTHON.fullmatch(PurePath(command).name) is not None


def run_by_env(command: str, args: Sequence[str]) -> tuple[str, Sequence[str]]:
    """The command ``env`` runs and its arguments (``env -u X A=1 python3 -m server``: ``python3``
    with ``-m server``), after its options and variables; ``command`` and ``args`` as they
    are for another command."""
    if PurePath(command).name not in _ENV:
        return command, args
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in _ENV_TAKING_VALUE or _env_flags(arg).endswith("+"):
            rest = rest[1:]
        elif arg == "--":
            break
        elif not arg.startswith("-") and "=" not in arg:
            return arg, rest
    return (rest[0], rest[1:]) if rest else (command, args)


def split_by_env(command: str, args: Sequence[str]) -> list[str] | None:
    """The command line ``env -S STRING`` runs (``-S``, ``--split-string``): ``STRING`` split
    into words as a shell would, then the arguments after it; ``None`` without ``-S``."""
    if PurePath(command).name not in _ENV:
        return None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        flags = _env_flags(arg)
        if arg.startswith("--split-string"):
            value = arg.partition("=")[2] if "=" in arg else (rest.pop(0) if rest else "")
        elif flags.endswith("S+"):
            value = rest.pop(0) if rest else ""
        elif flags.endswith("S"):
            value = arg[arg.index("S") + 1 :]
        elif arg in _ENV_TAKING_VALUE or flags.endswith("+"):
            rest = rest[1:]
            continue
        elif arg == "--" or not arg.startswith("-"):
            return None
        else:
            continue
        try:
            return [*shlex.split(value), *rest]
        except ValueError:  # an unclosed quote: env refuses it too
            return [*value.split(), *rest]
    return None


def env_directory(options: Sequence[str]) -> str | None:
    """The folder ``env`` given ``options`` (what comes before the command it runs) moves to
    before running it (``-C DIR``, ``--chdir=DIR``, ``-iCDIR``), or ``None``."""
    found, rest = None, list(options)
    while rest:
        arg = rest.pop(0)
        flags = _env_flags(arg)
        if arg == "--chdir" or flags.endswith("C+"):
            found = rest.pop(0) if rest else None
        elif arg.startswith("--chdir="):
            found = arg.partition("=")[2]
        elif flags.endswith("C"):
            found = arg[arg.index("C") + 1 :]
        elif arg in _ENV_TAKING_VALUE or flags.endswith("+"):
            rest = rest[1:]
    return found


def clears_environment(options: Sequence[str]) -> bool:
    """Whether ``env`` given ``options`` (what comes before the command it runs) starts it with
    an empty environment (``-i``, ``-``, ``--ignore-environment``): only its own assignments
    reach the command then."""
    return any(arg in ("-", "--ignore-environment") or "i" in _env_flags(arg) for arg in options)


def _env_flags(arg: str) -> str:
    """The letters of ``env``'s short options ``arg`` gives (``-iv``: ``iv``), up to the first
    taking a value (``-uNAME``: ``u``), then ``+`` when that value is the next word (``-iu``:
    ``iu+``); empty for another word."""
    if not arg.startswith("-") or arg.startswith("--"):
        return ""
    letters = arg[1:]
    for index, letter in enumerate(letters):
        if letter in "uCS":
            return letters[: index + 1] + ("+" if index == len(letters) - 1 else "")
    return letters


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


def imports_from_working_directory(command: str, args: Sequence[str]) -> bool:
    """Whether the Python ``command`` run with ``args`` puts its working directory first on
    ``sys.path``: it runs a module (``-m``), a string (``-c``) or its standard input. Not a
    script, whose own folder comes first instead, nor ``-P`` or ``-I``; ``False`` for a
    command that is not a Python. A Python that ``env`` runs is one (``env A=1 python3 -m
    server``)."""
    command, args = run_by_env(command, args)
    if not is_python(command):
        return False
    taking_value = False
    for arg in args:
        if taking_value:
            taking_value = False
            continue
        if arg == "--" or not arg.startswith("-"):  # a script (after "--" too)
            return False
        if arg == "-":
            return True
        if arg.startswith("--"):
            taking_value = arg == "--check-hash-based-pycs"
            continue
        for index, letter in enumerate(arg[1:], start=1):
            if letter in "mc":
                return True
            if letter in "PI":
                return False
            if letter in "XW":  # the rest of the word, or the next one, is its value
                taking_value = index == len(arg) - 1
                break
    return True


def ignores_environment(args: Sequence[str]) -> bool:
    """Whether a Python run with ``args`` is given ``-E`` before what it runs: it ignores every
    ``PYTHON*`` variable then, ``PYTHONSAFEPATH`` too, and only ``-P`` keeps its working
    directory off ``sys.path``."""
    taking_value = False
    for arg in args:
        if taking_value:
            taking_value = False
            continue
        if arg in ("-", "--") or not arg.startswith("-"):
            return False
        if arg.startswith("--"):
            taking_value = arg == "--check-hash-based-pycs"
            continue
        for index, letter in enumerate(arg[1:], start=1):
            if letter == "E":
                return True
            if letter in "mc":
                return False
            if letter in "XW":
                taking_value = index == len(arg) - 1
                break
    return False


def module_run(command: str, args: Sequence[str]) -> tuple[str, Sequence[str]]:
    """The module a Python runs with ``-m`` and its arguments (``python3 -I -m uv run x``:
    ``uv`` with ``run x``); ``command`` and ``args`` as they are for another command."""
    if not is_python(command):
        return command, args
    taking_value = False
    for index, arg in enumerate(args):
        if taking_value:
            taking_value = False
        elif not arg.startswith("-") or arg in ("-", "--"):
            break
        elif arg.startswith("--"):
            taking_value = arg == "--check-hash-based-pycs"
        else:
            for at, letter in enumerate(arg[1:], start=2):
                if letter == "m":  # `-m uv` or `-muv`
                    words = [arg[at:]] if at < len(arg) else []
                    words += args[index + 1 :]
                    return (words[0], words[1:]) if words else (command, args)
                if letter == "c":
                    return command, args
                if letter in "XW":
                    taking_value = at == len(arg)
                    break
    return command, args


def install_remedy(found: str) -> str:
    """How to install a server's package for the Python ``found`` (``PREFIX/bin/python3``):
    ``-m pip install``, unless ``PREFIX/lib/python3.*/EXTERNALLY-MANAGED`` marks it as a
    distribution's (PEP 668), whose pip refuses: a virtual environment then (whose prefix has
    no marker)."""
    if any(Path(found).parent.parent.glob("lib/python3*/EXTERNALLY-MANAGED")):
        return (
            "it is externally managed (PEP 668), so pip refuses to install there: make a "
            f"virtual environment ({found} -m venv DIR, then DIR/bin/python -m pip install "
            "PACKAGE) and give DIR/bin/python as the server's command"
        )
    return f"install the server's package there ({found} -m pip install PACKAGE)"
