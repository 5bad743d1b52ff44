"""Cursor's MCP servers, read and mapped to ``mcp_servers`` entries.

Cursor keeps its servers in ``mcp.json`` files of the shape Claude's take (``mcpServers``: a
name to ``command``/``args``/``env``, or ``url``/``headers``), so they are read and mapped by
:mod:`~hermes_core._mcp.claude_import`'s rules: the same size bounds, the same skipped entries
(a name hermes cannot use, the entry that starts ``hermes serve`` itself), the same ``cwd`` for
a project's stdio server. The places, highest precedence first:

1. the project's ``.cursor/mcp.json``, in the directory the command runs in: the repository's
   file, imported only when asked;
2. the user's ``~/.cursor/mcp.json``.

Cursor fills variables into those files when it starts a server. Each is written the way it
means it: ``${env:NAME}`` becomes hermes's own template ``${NAME}`` (expanded at connect time
from the environment and ``$HERMES_HOME/.env``); ``${userHome}`` the home directory;
``${workspaceFolder}`` and ``${workspaceFolderBasename}`` the project's directory and its name,
in the project's file only (in the user's file they mean whichever folder Cursor has open, so
such a server is skipped, saying why); ``${pathSeparator}`` and ``${/}`` the separator. A
server using any other ``${kind:...}`` is skipped naming it. ``envFile``, a file Cursor reads a
stdio server's variables from, is not read: the server is imported with a warning.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_core._mcp.claude_import import Source, user_home
from hermes_core._paths import Environment

__all__ = ["CursorVariables", "cursor_rule_files", "cursor_sources"]

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TEMPLATE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?::-.*)?", re.DOTALL)
_STREAMABLE = frozenset({"streamable-http", "streamableHttp", "streamable_http"})


def cursor_sources(env: Environment, *, mcp_json: Path | None = None) -> list[Source]:
    """The places Cursor keeps servers, highest precedence first; ``mcp_json`` replaces the
    user's ``~/.cursor/mcp.json``."""
    user_file = mcp_json if mcp_json is not None else user_home(env) / ".cursor" / "mcp.json"
    project_file = env.cwd / ".cursor" / "mcp.json"
    return [
        Source("Cursor project", project_file, runs_in=env.cwd, repository=True),
        Source("Cursor user", user_file),
    ]


def cursor_rule_files(env: Environment) -> list[Path]:
    """The repository's Cursor rules that exist (``.cursorrules``, ``.cursor/rules``): listed
    as not imported, since hermes has no instructions file."""
    places = [env.cwd / ".cursorrules", env.cwd / ".cursor" / "rules"]
    return [path for path in places if path.exists()]


class CursorVariables:
    """Cursor's dialect of an entry, as Claude would write it (a
    :data:`~hermes_core._mcp.claude_import.Prepare`)."""

    def __init__(self, env: Environment) -> None:
        self._home = str(user_home(env))

    def __call__(self, raw: Mapping[str, Any], source: Source) -> tuple[dict[str, Any], list[str]]:
        """``raw`` with Cursor's variables written out, and notes; ``ValueError`` says why the
        server cannot be imported."""
        entry = dict(raw)
        notes: list[str] = []
        env_file = entry.pop("envFile", None)
        if env_file is not None:
            with contextlib.suppress(ValueError):  # named as Cursor wrote it, then
                env_file = self._text(env_file, source) if isinstance(env_file, str) else env_file
            notes.append(
                f"its envFile ({env_file}) is not read: give its variables in "
                "$HERMES_HOME/.env (hermes expands ${VAR} from there)"
            )
        if entry.get("type") in _STREAMABLE:
            entry["type"] = "http"
        for key in ("command", "url"):
            if isinstance(entry.get(key), str):
                entry[key] = self._text(entry[key], source)
        if isinstance(entry.get("args"), list):
            entry["args"] = [
                self._text(a, source) if isinstance(a, str) else a for a in entry["args"]
            ]
        for key in ("env", "headers"):
            if isinstance(entry.get(key), Mapping):
                entry[key] = {
                    name: self._text(value, source) if isinstance(value, str) else value
                    for name, value in entry[key].items()
                }
        return entry, notes

    def _text(self, text: str, source: Source) -> str:
        return _VARIABLE.sub(lambda match: self._value(match.group(1), source), text)

    def _value(self, variable: str, source: Source) -> str:
        kind, _, name = variable.partition(":")
        if kind == "env" and _ENV_NAME.fullmatch(name):
            return "${" + name + "}"
        if variable == "userHome":
            return self._home
        if variable in ("pathSeparator", "/"):
            return os.sep
        if variable in ("workspaceFolder", "workspaceFolderBasename"):
            if source.runs_in is None:
                raise ValueError(
                    f"it uses ${{{variable}}}, the folder Cursor has open, which a server of "
                    "every project has no one value for; import it from that project's "
                    ".cursor/mcp.json, or add it with hermes mcp add and a path"
                )
            folder = source.runs_in
            return str(folder) if variable == "workspaceFolder" else folder.name
        if _TEMPLATE.fullmatch(variable):
            return "${" + variable + "}"  # hermes's own template: kept, expanded at connect
        raise ValueError(
            f"it uses ${{{variable}}}, which hermes cannot fill in (it writes ${{env:NAME}}, "
            "${userHome}, ${workspaceFolder}, ${workspaceFolderBasename} and ${pathSeparator})"
        )
