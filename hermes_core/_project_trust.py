"""The project gate: one rule for everything a project can bring.

A *project* is the working directory, resolved through symbolic links. Whatever hermes would
run from it is the project's: plugins, hook directories, skills, a ``config.yaml`` that lies in
it (``HERMES_HOME=./.hermes``: not read at all, :func:`hermes_core._config.config_in_effect`;
its shell hooks and MCP servers are refused here too, for a configuration handed to a host in
code), a ``.mcp.json``.
It loads only when the user opened the gate, ``HERMES_ENABLE_PROJECT_PLUGINS=1``, whatever
``HERMES_HOME`` points at.

:func:`project_owns` says whose a path is, comparing real paths:

- a path whose real path lies in the project is the project's, wherever it was found (a
  ``$HERMES_HOME/plugins/x`` that is a link into the project, a ``HERMES_HOME`` inside it);
- a path found in the project whose real path lies outside it is the project's too (a link
  the project ships points where the project chose), unless that real path is the user's own
  ``$HERMES_HOME``: a project's ``.hermes/plugins`` linked to ``$HERMES_HOME/plugins`` does
  not relabel the user's plugins. A ``HERMES_HOME`` found in the project is no such home
  (``.hermes -> ../other/.hermes``, a folder of another clone beside it, is where the
  project chose): then only the user's ``~/.hermes`` is.

Working from ``/``, from the user's home directory or from a folder holding it (``/home``) is
not working in a project: every file, the user's own ``~/.hermes`` included, lies under those,
so nothing there is a project's. Nor is working from ``~/.hermes`` itself, or from a folder
holding where it leads (``~/dotfiles``, when ``~/.hermes`` links to ``~/dotfiles/hermes``):
the user's own home would be taken for the project's (its configuration not read). A folder
inside ``~/.hermes`` (a skill's clone) is a project as any other.

A ``HERMES_HOME`` the user named is gated the same when they work in it (``cd /srv/hermes``):
hermes cannot tell it from a repository's ``HERMES_HOME=.`` (an absolute path proves nothing:
an ``.envrc`` exports ``$PWD``), so the refusal of what lies in it says so and to run hermes
from another directory. Only ``~/.hermes``, which no repository names, is exempt.

A configuration file named on the command line (``hermes --config FILE``) is the user's choice
for that one command: its shell hooks and MCP servers run wherever it lies
(:func:`config_refusal`). ``HERMES_HOME`` and ``HERMES_CONFIG`` are standing settings, which a
project must not turn into an opening: a file they lead to in the project is the project's.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Final, Protocol

__all__ = [
    "PROJECT_GATE_FLAG",
    "config_refusal",
    "gate_is_open",
    "project_owns",
    "project_refusal",
    "project_root",
]

PROJECT_GATE_FLAG: Final = "HERMES_ENABLE_PROJECT_PLUGINS"
"""The environment flag that opens the project gate."""


class _Env(Protocol):
    """What the gate reads of an :class:`~hermes_core._paths.Environment` (a protocol, not an
    import: ``Environment.data_home`` asks this module, so this module cannot import that one)."""

    @property
    def home(self) -> Path: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def user_home(self) -> Path | None: ...

    @property
    def config_file(self) -> Path | None: ...

    def flag(self, name: str) -> bool: ...


def project_root(env: _Env) -> Path | None:
    """The project hermes works in: the working directory, resolved; ``None`` when that is
    ``/``, the user's home directory or a folder holding it, or the user's ``~/.hermes`` or a
    folder holding where it leads."""
    return _root_of(env.cwd, env.user_home)


@functools.lru_cache(maxsize=16)
def _root_of(cwd: Path, user_home: Path | None) -> Path | None:
    # Asked once for each plugin, hook directory and skill a start finds: resolved once.
    resolved = _resolved(cwd)
    if resolved == Path(resolved.anchor):
        return None
    if user_home is not None and (
        _resolved(user_home).is_relative_to(resolved)
        or _resolved(user_home / ".hermes").is_relative_to(resolved)
    ):
        return None
    return resolved


def gate_is_open(env: _Env) -> bool:
    """Whether the user opened the project gate (``HERMES_ENABLE_PROJECT_PLUGINS=1``)."""
    return env.flag(PROJECT_GATE_FLAG)


def project_owns(env: _Env, path: Path) -> bool:
    """Whether ``path`` (as found, before resolving links) is the project's (see the module
    docstring for the rule)."""
    project = project_root(env)
    if project is None:
        return False
    real = _resolved(path)
    if real.is_relative_to(project):
        return True
    if not _found_in(env, path, project):
        return False
    users = _users_home(env, project)
    return users is None or not real.is_relative_to(users)


def _found_in(env: _Env, path: Path, project: Path) -> bool:
    """Whether ``path``, as found (links not followed), lies in the working directory or the
    project."""
    found = Path(os.path.abspath(path))
    return found.is_relative_to(Path(os.path.abspath(env.cwd))) or found.is_relative_to(project)


def _users_home(env: _Env, project: Path) -> Path | None:
    """The real path of the user's own home: ``$HERMES_HOME``'s, unless ``HERMES_HOME`` is
    found in the project (a link the project ships leads where the project chose: another
    clone beside it), then ``~/.hermes``'s; ``None`` when that is unknown."""
    if not _found_in(env, env.home, project):
        return _resolved(env.home)
    return None if env.user_home is None else _resolved(env.user_home / ".hermes")


def project_refusal(env: _Env, path: Path, what: str) -> str | None:
    """``None`` when ``what`` at ``path`` may load; else why not: it is the project's and the
    gate is closed. The message names ``what``, the path and the way to open the gate."""
    if gate_is_open(env) or not project_owns(env, path):
        return None
    project = project_root(env)
    said = (
        f"{what} at {path} (in the project {project}): project extensions load "
        f"only when {PROJECT_GATE_FLAG}=1 is set in the environment"
    )
    if project is not None and _in_home_worked_in(env, path, project):
        said += (
            f"; HERMES_HOME ({env.home}) is the working directory, and hermes cannot tell "
            "a home you named from one a cloned repository names (HERMES_HOME=.): to use it "
            "as yours, run hermes from another directory"
        )
    return said


def _in_home_worked_in(env: _Env, path: Path, project: Path) -> bool:
    """Whether ``path`` lies in ``HERMES_HOME`` and that home is the project: a home the user
    named and works in (``cd /srv/hermes``) looks just like a repository's ``HERMES_HOME=.``,
    absolute or not (an ``.envrc`` exports ``$PWD``), so it stays gated; only the message
    differs (a home below the project, ``./.hermes``, is no home the user works in)."""
    found = Path(os.path.abspath(path))
    return found.is_relative_to(os.path.abspath(env.home)) and _resolved(env.home) == project


def config_refusal(env: _Env, config_path: Path | None, what: str) -> str | None:
    """:func:`project_refusal` for ``what`` of the configuration file ``config_path``: ``None``
    for a configuration built in code (``None``) or named on the command line
    (``env.config_file``)."""
    if config_path is None:
        return None
    if env.config_file is not None and _resolved(env.config_file) == _resolved(config_path):
        return None
    return project_refusal(env, config_path, what)


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return Path(os.path.abspath(path))
