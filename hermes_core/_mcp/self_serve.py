"""The MCP server entries that start this hermes's own ``hermes serve``: one rule, for
``hermes mcp add`` (which refuses such an entry) and ``hermes import-agent`` (which skips it).

Added to the configuration it serves, such an entry makes every hermes command start a
``hermes serve`` of that same configuration: it lists this hermes's core tools again, deferred
(``mcp__hermes__terminal`` beside ``terminal``), and starts a ``hermes serve`` of its own.

An entry is this hermes when its command is ``hermes`` (``hermes.exe``: Claude Desktop's file
may come from Windows) or a Python running ``-m hermes_core``, its arguments hold ``serve``,
and the configuration file it names is this one: ``--config FILE`` before ``serve`` (relative
to the entry's ``cwd``, or to the directory of a ``-C DIR`` before ``serve``), else
``HERMES_CONFIG`` of its ``env``, else ``HERMES_HOME`` of its ``env`` (its ``config.yaml``).
One that names none is taken for this hermes: it is the line docs/mcp.md gives MCP clients,
and which home its child would read depends on ``HOME`` alone, which nobody adding it has in
mind. A name hermes cannot know when adding (a ``${VAR}``) is
taken for another hermes's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from hermes_core._paths import Environment

__all__ = ["SERVES_ITSELF", "serves_this_hermes", "starts_hermes_serve"]

SERVES_ITSELF: Final = (
    "it starts hermes serve, this hermes itself: hermes would serve its own tools to itself"
)
"""Why such an entry is refused or skipped."""


def starts_hermes_serve(command: str, args: Sequence[str]) -> bool:
    """Whether ``command`` with ``args`` runs ``hermes serve`` (of any configuration)."""
    # Either separator: Claude Desktop's file may come from Windows (hermes.exe).
    program = PureWindowsPath(command).name.lower()
    by_module = any(list(args[i : i + 2]) == ["-m", "hermes_core"] for i in range(len(args)))
    return "serve" in args and (program in ("hermes", "hermes.exe") or by_module)


def serves_this_hermes(entry: Mapping[str, Any], env: Environment, config_path: Path) -> bool:
    """Whether the ``mcp_servers`` entry ``entry``, run from ``env.cwd``, starts the
    ``hermes serve`` of the configuration file ``config_path`` (see the module docstring)."""
    command, args = entry.get("command"), entry.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list):
        return False
    words = [str(arg) for arg in args]
    if not starts_hermes_serve(command, words):
        return False
    variables = entry.get("env")
    named = _named_config(words, variables if isinstance(variables, Mapping) else {})
    if named is None:
        return True
    if "${" in str(named):
        return False
    cwd = entry.get("cwd")
    base = env.cwd / Path(cwd).expanduser() if isinstance(cwd, str) else env.cwd
    directory = _option(words[: words.index("serve")], "-C", "--directory")
    if directory is not None:
        if "${" in directory:
            return False
        base = base / Path(directory).expanduser()
    return _real(base / Path(named).expanduser()) == _real(config_path)


def _option(args: list[str], *names: str) -> str | None:
    """The value of the option called ``names`` last given in ``args`` (click's last one
    wins): ``--name VALUE`` or ``--name=VALUE``, ``-N VALUE`` or ``-NVALUE``; else ``None``."""
    value = None
    for i, word in enumerate(args):
        for name in names:
            joined = f"{name}=" if name.startswith("--") else name
            if word == name and i + 1 < len(args):
                value = args[i + 1]
            elif word.startswith(joined) and len(word) > len(joined):
                value = word.removeprefix(joined)
    return value


def _named_config(args: list[str], variables: Mapping[str, Any]) -> PurePath | None:
    named = _option(args[: args.index("serve")], "--config")
    if named is not None:
        return PurePath(named)
    if variables.get("HERMES_CONFIG"):
        return PurePath(str(variables["HERMES_CONFIG"]))
    if variables.get("HERMES_HOME"):
        return PurePath(str(variables["HERMES_HOME"])) / "config.yaml"
    return None


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return Path(os.path.abspath(path))
