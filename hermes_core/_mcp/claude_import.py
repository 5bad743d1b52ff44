"""Claude Code's and Claude Desktop's MCP servers, read and mapped to ``mcp_servers`` entries.

Pure: this module reads the files and plans the changes; ``hermes import-agent claude-code``
prints the plan and writes it. The places read, highest precedence first:

1. Claude Code, local scope: ``projects["<cwd>"].mcpServers`` in ``~/.claude.json``;
2. Claude Code, project scope: ``mcpServers`` in ``./.mcp.json``;
3. Claude Code, user scope: top-level ``mcpServers`` in ``~/.claude.json``;
4. Claude Desktop: ``mcpServers`` in ``claude_desktop_config.json``
   (``~/.config/Claude/`` on Linux, ``~/Library/Application Support/Claude/`` on macOS,
   ``%APPDATA%\\Claude\\`` on Windows).

The project scope is the repository's: its servers are imported only when asked
(``read_claude_servers(..., project=True)``, ``hermes import-agent claude-code --project``),
and never one the user disabled in Claude Code (``disabledMcpjsonServers`` of the project's
entry in ``~/.claude.json``, of ``~/.claude/settings.json`` or of the project's
``.claude/settings.json`` and ``.claude/settings.local.json``: :func:`disabled_project_servers`).
Left out, such a server shadows nothing: a server of the same name of the user scope is taken.

A server of one name is taken from the highest place that has it. ``stdio`` entries become
``command``/``args``/``env``, ``http`` and ``sse`` entries ``url``/``headers``; ``${VAR}``
templates are copied unexpanded (hermes expands them at connect time), literal secrets are
planned for ``$HERMES_HOME/.env`` with a ``${VAR}`` in their place
(:func:`~hermes_core._mcp.secrets.move_secrets`). A stdio server of the local or project scope
belongs to its project: it gets ``cwd`` set to the project directory, so relative paths in its
command keep working wherever hermes runs. Entries of another type, that hermes cannot
represent, or that start this hermes's own ``hermes serve`` (the entry docs/mcp.md has the
user give Claude; :mod:`~hermes_core._mcp.self_serve`) are skipped with the reason.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core._config import (
    MCP_SERVER_NAME_RULE,
    InvalidConfig,
    McpServerConfig,
    check_mcp_server_name,
)
from hermes_core._errors import HermesError
from hermes_core._mcp.self_serve import SERVES_ITSELF, serves_this_hermes
from hermes_core._paths import Environment

__all__ = [
    "ClaudeServer",
    "SkippedServer",
    "claude_sources",
    "desktop_config_path",
    "disabled_project_servers",
    "read_claude_servers",
    "user_home",
]


JSON_MAX_BYTES = 256 * 1024 * 1024
"""The largest Claude file read (``~/.claude.json`` keeps Claude Code's history and grows)."""
_STDIO_KEYS = frozenset({"type", "command", "args", "env"})
_REMOTE_KEYS = frozenset({"type", "url", "headers"})


@dataclass(frozen=True)
class Source:
    """One file Claude keeps MCP servers in, and where in it."""

    label: str
    """``local scope``, ``project scope``, ``user scope`` or ``Claude Desktop``."""
    path: Path
    project: str | None = None
    """For the local scope: the key of ``projects`` holding the servers."""
    runs_in: Path | None = None
    """The project directory the servers of this place belong to (local and project scope)."""
    repository: bool = False
    """A file of the repository (``.mcp.json``), not of the user: imported only when asked."""

    def describe(self) -> str:
        """``user scope (/home/me/.claude.json)``."""
        return f"{self.label} ({self.path})"

    def in_repository(self) -> str:
        """The file as the repository names it: ``.mcp.json``, ``.cursor/mcp.json``."""
        if self.runs_in is not None and self.path.is_relative_to(self.runs_in):
            return str(self.path.relative_to(self.runs_in))
        return self.path.name


Prepare = Callable[[Mapping[str, Any], Source], tuple[Mapping[str, Any], list[str]]]
"""An agent's own entry, as Claude would write it, and notes about what it changed."""


@dataclass(frozen=True)
class ClaudeServer:
    """A server found in a Claude file, mapped to an ``mcp_servers`` entry."""

    name: str
    entry: dict[str, Any]
    source: Source
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SkippedServer:
    """A server that is not imported, and why."""

    name: str
    reason: str
    where: str


def user_home(env: Environment) -> Path:
    """The user's home directory, where Claude keeps its files (``HOME``, or ``USERPROFILE``)."""
    home = env.get("HOME") or env.get("USERPROFILE")
    if not home:
        raise HermesError(
            "HOME is not set, so ~/.claude.json cannot be found; set HOME or pass --claude-json"
        )
    return Path(home)


def desktop_config_path(env: Environment) -> Path:
    """Where Claude Desktop keeps ``claude_desktop_config.json`` on this platform."""
    if sys.platform == "darwin":
        return user_home(env) / "Library/Application Support/Claude/claude_desktop_config.json"
    if sys.platform == "win32":
        appdata = env.get("APPDATA")
        base = Path(appdata) if appdata else user_home(env) / "AppData" / "Roaming"
        return base / "Claude" / "claude_desktop_config.json"
    config_home = env.get("XDG_CONFIG_HOME")
    base = Path(config_home) if config_home else user_home(env) / ".config"
    return base / "Claude" / "claude_desktop_config.json"


def claude_sources(
    env: Environment,
    *,
    claude_json: Path | None = None,
    desktop_config: Path | None = None,
) -> list[Source]:
    """The places servers are read from, highest precedence first."""
    user_file = claude_json if claude_json is not None else user_home(env) / ".claude.json"
    desktop = desktop_config if desktop_config is not None else desktop_config_path(env)
    return [
        Source("local scope", user_file, project=str(env.cwd), runs_in=env.cwd),
        Source("project scope", env.cwd / ".mcp.json", runs_in=env.cwd, repository=True),
        Source("user scope", user_file),
        Source("Claude Desktop", desktop),
    ]


def _read_json(path: Path) -> Any:
    """The parsed JSON of ``path``, ``None`` when it does not exist. A repository's files are
    whatever its author wrote (a link to ``/dev/zero``, a FIFO, nesting without end), so only a
    regular file of at most :data:`JSON_MAX_BYTES` is read, without blocking; anything else is
    a :class:`HermesError` naming the file."""
    from hermes_core._yaml_limits import YamlFileError, read_limited

    try:
        text = read_limited(path, JSON_MAX_BYTES)
    except YamlFileError as exc:
        raise HermesError(f"{path}: {exc}") from None
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise HermesError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise HermesError(
            f"{path}: not valid JSON: nested more than hermes reads (Python's recursion limit)"
        ) from None


def _servers_in(document: Any, source: Source) -> Mapping[str, Any]:
    """The ``mcpServers`` mapping of ``source`` in its parsed file (empty when absent)."""
    if not isinstance(document, Mapping):
        return {}
    holder: Any = document
    if source.project is not None:
        projects = document.get("projects")
        holder = projects.get(source.project) if isinstance(projects, Mapping) else None
        if not isinstance(holder, Mapping):
            return {}
    servers = holder.get("mcpServers")
    if servers is None:
        return {}
    if not isinstance(servers, Mapping):
        raise HermesError(f"{source.describe()}: mcpServers is not a mapping")
    return servers


def _text_mapping(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} is not a mapping")
    mapped: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise ValueError(f"{what}.{key} is not text")
        mapped[str(key)] = str(item)
    return mapped


def _map_entry(raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The ``mcp_servers`` entry for one Claude entry, and notes; ``ValueError`` says why it
    cannot be imported."""
    kind = raw.get("type")
    if kind is None:
        kind = "stdio" if "command" in raw else "http" if "url" in raw else None
    if kind is None:
        raise ValueError("it has neither a command nor a url")
    notes: list[str] = []
    if kind == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command:
            raise ValueError("its command is missing or not text")
        args = raw.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
            raise ValueError("its args are not a list of text")
        entry: dict[str, Any] = {"command": command, "args": [str(a) for a in args]}
        env = _text_mapping(raw.get("env"), "env")
        if env:
            entry["env"] = env
        ignored = sorted(set(raw) - _STDIO_KEYS)
    elif kind in ("http", "sse"):
        url = raw.get("url")
        if not isinstance(url, str) or not url:
            raise ValueError("its url is missing or not text")
        entry = {"url": url}
        headers = _text_mapping(raw.get("headers"), "headers")
        if headers:
            entry["headers"] = headers
        if kind == "sse":
            notes.append(
                "it uses the legacy SSE transport; hermes connects to the URL with streamable "
                "HTTP, so give it the server's streamable HTTP endpoint if it fails"
            )
        ignored = sorted(set(raw) - _REMOTE_KEYS)
    else:
        raise ValueError(f"unknown type {kind!r} (hermes imports stdio, http and sse)")
    if ignored:
        notes.append(f"ignored keys {ignored}")
    try:
        McpServerConfig.model_validate(entry)
    except InvalidConfig as exc:
        raise ValueError(exc.problems[0].message) from None
    return entry, notes


_DISABLED_KEY = "disabledMcpjsonServers"


def disabled_project_servers(
    env: Environment, *, claude_json: Path | None = None
) -> dict[str, Path]:
    """The servers of the project's ``.mcp.json`` the user disabled in Claude Code, each with
    the file that says so: ``disabledMcpjsonServers`` of the project's entry in
    ``~/.claude.json`` and of the settings files (``~/.claude/settings.json``, the project's
    ``.claude/settings.json`` and ``.claude/settings.local.json``). A file that exists but
    cannot be read is a :class:`HermesError` naming it: it could disable any of them."""
    home = user_home(env)
    user_file = claude_json if claude_json is not None else home / ".claude.json"
    places: list[tuple[Path, str | None]] = [
        # Claude Code keys projects by their path; the real one too, in case cwd is a link.
        *((user_file, key) for key in dict.fromkeys([str(env.cwd), str(env.cwd.resolve())])),
        (home / ".claude" / "settings.json", None),
        (env.cwd / ".claude" / "settings.json", None),
        (env.cwd / ".claude" / "settings.local.json", None),
    ]
    disabled: dict[str, Path] = {}
    for path, project in places:
        try:
            document = _read_json(path)
        except HermesError as error:
            raise HermesError(
                f"{error}; it may disable servers of the repository's .mcp.json "
                f"({_DISABLED_KEY}), so with --project none is imported until it can be read"
            ) from None
        holder = document
        if project is not None and isinstance(document, Mapping):
            projects = document.get("projects")
            holder = projects.get(project) if isinstance(projects, Mapping) else None
        names = holder.get(_DISABLED_KEY) if isinstance(holder, Mapping) else None
        if isinstance(names, list):
            for name in names:
                if isinstance(name, str):
                    disabled.setdefault(name, path)
    return disabled


def read_claude_servers(
    sources: Sequence[Source],
    *,
    project: bool = False,
    disabled: Mapping[str, Path] | None = None,
    prepare: Prepare | None = None,
    into: Environment | None = None,
) -> tuple[dict[str, ClaudeServer], list[SkippedServer]]:
    """Every importable server of ``sources`` (highest precedence first), by name, and the
    skipped ones. A server shadowed by a higher source is not reported.

    Servers of a repository's file (the project scope) are left out unless ``project``, and
    those named in ``disabled`` always; left out, they shadow nothing. ``prepare`` turns an
    agent's own dialect of an entry (Cursor's variables) into Claude's, with notes, before it
    is mapped; its ``ValueError`` skips the server with the reason. A ``hermes serve`` of the
    hermes imported ``into`` is skipped
    (:func:`~hermes_core._mcp.self_serve.serves_this_hermes`)."""
    found: dict[str, ClaudeServer] = {}
    skipped: list[SkippedServer] = []
    taken: set[str] = set()
    documents: dict[Path, Any] = {}
    for source in sources:
        if source.path not in documents:
            documents[source.path] = _read_json(source.path)
        for name, raw in _servers_in(documents[source.path], source).items():
            if name in found or name in taken:
                continue
            where = source.describe()
            if source.repository and not project:
                reason = (
                    f"a server of the repository's {source.in_repository()}: "
                    "imported only with --project"
                )
                skipped.append(SkippedServer(name, reason, where))
                continue
            if source.repository and disabled and name in disabled:
                reason = f"disabled in Claude Code ({_DISABLED_KEY} in {disabled[name]})"
                skipped.append(SkippedServer(name, reason, where))
                continue
            taken.add(name)
            try:
                check_mcp_server_name(name)
            except ValueError:
                skipped.append(SkippedServer(name, f"the name: {MCP_SERVER_NAME_RULE}", where))
                continue
            if not isinstance(raw, Mapping):
                skipped.append(SkippedServer(name, "the entry is not a mapping", where))
                continue
            try:
                raw, notes = prepare(raw, source) if prepare is not None else (raw, [])
                entry, mapped_notes = _map_entry(raw)
                notes += mapped_notes
            except ValueError as exc:
                skipped.append(SkippedServer(name, str(exc), where))
                continue
            if source.runs_in is not None and "command" in entry:
                entry["cwd"] = str(source.runs_in)
            if into is not None and serves_this_hermes(entry, into, into.config_path):
                skipped.append(SkippedServer(name, SERVES_ITSELF, where))
                continue
            found[name] = ClaudeServer(name, entry, source, tuple(notes))
    return found, skipped
