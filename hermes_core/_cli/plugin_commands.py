"""Subcommands contributed by enabled plugins through the ``hermes_cli_commands`` hook.

Loaded only when ``hermes`` is asked for a command it does not have built in, so ``hermes
--version`` and the built-in commands never pay for loading plugins. ``hermes --help`` lists
them from a cache: each time the plugin commands are loaded, their names and short help are
saved to ``<cache dir>/cli-commands.json`` under a key made of what decides which plugins load
(the configuration file's bytes, the ``HERMES_*`` variables, which variables are set, the
working directory, the plugins in the plugin directories and their files' times, the names in
the import path's directories, the version). While
the key holds, help reads the file and nothing else; when it does not (a plugin was enabled, a
package installed), help loads the plugins once, as before, and the cache is written again. A
cache file that cannot be read or is not what this module writes is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core._version import __version__

if TYPE_CHECKING:
    import click

    from hermes_core._paths import Environment
    from hermes_core._plugins.records import PluginRecord

__all__ = [
    "cached_command_help",
    "command_help_key",
    "plugin_commands",
    "save_command_help",
    "short_help",
]

log = logging.getLogger("hermes_core._cli")

CACHE_NAME = "cli-commands.json"
_PASSED_VARIABLES = ("PYTHONPATH",)


def plugin_commands(
    env: Environment, records: list[PluginRecord] | None = None
) -> dict[str, click.Command]:
    """The commands of the enabled plugins, by name, loaded as every command loads plugins (a
    host, without catalogs or MCP servers). A name claimed twice is an error naming both
    plugins (:class:`~hermes_core._errors.RegistrationError` in strict mode). ``records``, when
    given, receives every plugin's record (to explain a command that is missing)."""
    from hermes_core._cli.host_runs import cli_host
    from hermes_core._config import config_in_effect

    env.check_config_file()
    # Loading is hermes' (stderr); the command, run later, prints the user's output on stdout.
    with cli_host(config_in_effect(env), env) as host:
        host.load_plugins()
        if records is not None:
            records.extend(host.plugins)
        return {name: found.spec.command for name, found in host.registrations.cli_commands.items()}


def short_help(command: click.Command) -> str:
    """What ``--help`` shows of ``command`` before it is clipped to the terminal's width."""
    return command.get_short_help_str(limit=1000)


def _stamp(path: Path) -> str:
    try:
        return str(os.stat(path).st_mtime_ns)
    except OSError:
        return "-"


def _names(directory: Path) -> str:
    """A hash of the names in ``directory`` but ``__pycache__`` (which importing creates)."""
    try:
        names = sorted(name for name in os.listdir(directory) if name != "__pycache__")
    except OSError:
        return "-"
    return hashlib.sha256("\0".join(names).encode()).hexdigest()[:16]


def _plugins_stamp(directory: Path) -> list[list[str]]:
    """What a plugin directory holds: each plugin and the files at its top (its manifest, its
    ``__init__.py``) with their modification times, so adding, removing or editing a plugin in
    place changes it. Directory times are left out: Python writing ``__pycache__`` changes them."""
    stamps: list[list[str]] = []
    try:
        plugins = sorted(directory.iterdir())
    except OSError:
        return stamps
    for plugin in plugins:
        if plugin.name == "__pycache__":
            continue
        if not plugin.is_dir():
            stamps.append([plugin.name, _stamp(plugin)])
            continue
        stamps.append([plugin.name, "dir"])
        with contextlib.suppress(OSError):
            stamps += [
                [f"{plugin.name}/{entry.name}", _stamp(entry)]
                for entry in sorted(plugin.iterdir())
                if entry.name != "__pycache__"
            ]
    return stamps


def command_help_key(env: Environment) -> str:
    """The key of the cache: a hash of what decides which plugins load and what they are."""
    try:
        config = env.config_path.read_bytes()
    except OSError:
        config = b"\0absent"
    variables = env.variables
    named = {key: value for key, value in variables.items() if key.startswith("HERMES_")}
    named.update({key: variables[key] for key in _PASSED_VARIABLES if key in variables})
    # A plugin may require variables to be set (plugin.yaml requires_env): which are set, not
    # their values, decides it.
    present = sorted(key for key, value in variables.items() if value)
    plugin_dirs = [env.user_plugins_dir, env.project_plugins_dir, env.bundled_plugins_dir]
    # Installing, upgrading or removing a package changes the names in its import path's
    # directory (its ``*.dist-info``). The working directory (first on the path under ``python
    # -m``) is left out: it holds no installed package, and files come and go there.
    paths = [Path(entry) for entry in sys.path if entry and Path(entry) != env.cwd]
    places = [*env.nix_store_paths, *paths]
    identity = {
        "version": __version__,
        "config_path": str(env.config_path),
        "config": hashlib.sha256(config).hexdigest(),
        "variables": named,
        "present": present,
        "cwd": str(env.cwd),
        "plugins": [[str(d), _plugins_stamp(d)] for d in plugin_dirs],
        "places": [[str(place), _names(place)] for place in places],
    }
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def cached_command_help(env: Environment) -> dict[str, str] | None:
    """The plugin commands' short help from the cache, or ``None`` when the cache is missing,
    unreadable, malformed or keyed on something that changed."""
    path = env.cache_dir / CACHE_NAME
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != command_help_key(env):
        return None
    commands = data.get("commands")
    if not isinstance(commands, dict) or not all(
        isinstance(name, str) and isinstance(text, str) for name, text in commands.items()
    ):
        return None
    return dict(commands)


def save_command_help(env: Environment, key: str, commands: Mapping[str, click.Command]) -> None:
    """Cache the short help of ``commands`` (the plugin commands just loaded) under ``key``,
    the :func:`command_help_key` taken *before* they were loaded (loading plugins extends the
    import path); a cache that cannot be written is skipped."""
    from hermes_core._atomic_write import write_atomically

    data = {
        "key": key,
        "commands": {name: short_help(command) for name, command in commands.items()},
    }
    try:
        write_atomically(env.cache_dir / CACHE_NAME, json.dumps(data, ensure_ascii=False))
    except OSError as exc:
        log.debug("the plugin commands' help is not cached: %s", exc)
