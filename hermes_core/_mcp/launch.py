"""How a stdio server is started: its working directory, its environment and its arguments.

A server of the user's starts in the working directory, which may be a project whose gate is
closed (a cloned repository). Two launchers look there first for what they run: Python run as
a module (``python3 -m NAME`` puts the directory first on ``sys.path``) and ``npx`` (the
project's ``node_modules``, and its ``.npmrc``, which may name another registry). Started in
such a project, the first gets ``PYTHONSAFEPATH=1``
(:func:`~hermes_core._mcp.interpreter.project_safe_path`) and the second ``--prefix`` the
user's home directory (:func:`launch_args`), so that neither runs a module or a package the
project plants under the server's name; the server still works in the project.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Final

from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from hermes_core._mcp.interpreter import project_safe_path
from hermes_core._project_trust import gate_is_open, project_owns

if TYPE_CHECKING:
    from hermes_core._config import McpServerConfig
    from hermes_core._paths import Environment

__all__ = ["child_environment", "launch_args", "server_cwd"]

_NPX: Final = frozenset({"npx", "npx.cmd"})


def server_cwd(config: McpServerConfig, env: Environment) -> Path:
    """The working directory of the server: its ``cwd``, relative to hermes's, else hermes's."""
    return env.cwd if config.cwd is None else env.cwd / Path(config.cwd).expanduser()


def child_environment(config: McpServerConfig, env: Environment) -> dict[str, str]:
    """The small safe environment the SDK gives a server (``HOME``, ``PATH``...), plus the
    entry's ``env``: secrets go in ``env`` only. The safe variables are the host's
    ``Environment``'s, not the process's, so that each host's servers see that host's (the SDK
    reads ``os.environ``); a value that is a shell function (``()...``) is left out, as the SDK
    leaves it out. A Python run as a module in a gated project imports none of its modules,
    unless the entry's ``env`` sets ``PYTHONSAFEPATH`` itself."""
    assert config.command is not None
    safe = {
        name: value
        for name in DEFAULT_INHERITED_ENV_VARS
        if (value := env.get(name)) is not None and not value.startswith("()")
    }
    guard = project_safe_path(config.command, config.args, server_cwd(config, env), env)
    return safe | guard | dict(config.env)


def launch_args(config: McpServerConfig, env: Environment) -> list[str]:
    """The server's arguments: its ``args``, after ``--prefix HOME`` for an ``npx`` started in
    a project whose gate is closed (and given no ``--prefix`` of its own), so that it looks for
    the package, and reads ``.npmrc``, where it would from the user's home directory."""
    assert config.command is not None
    args = list(config.args)
    if PurePath(config.command).name not in _NPX or gate_is_open(env):
        return args
    if any(arg == "--prefix" or arg.startswith("--prefix=") for arg in args):
        return args
    if not project_owns(env, server_cwd(config, env)):
        return args
    return ["--prefix", str(env.user_home or Path(env.cwd.anchor)), *args]
