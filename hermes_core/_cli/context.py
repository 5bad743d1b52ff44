"""What every ``hermes`` subcommand starts from: the environment, with ``--config`` applied."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_core._paths import Environment

if TYPE_CHECKING:
    from hermes_core._config import Config


def environment() -> Environment:
    """The process environment, using the file given to ``hermes --config`` when there is one.

    A configuration file named with ``--config`` or ``HERMES_CONFIG`` must exist
    (:meth:`~hermes_core._paths.Environment.check_config_file`, a ``ConfigError``: exit status
    2). The root command's parameters are read directly: click resolves a subcommand (and so
    loads plugin commands) before the root callback has run.
    """
    ctx = click.get_current_context(silent=True)
    config_file: Path | None = None
    if ctx is not None:
        given = ctx.find_root().params.get("config_file")
        if isinstance(given, Path):
            # Absolute, as given: resolving would turn bash's /dev/fd/63 (``<(...)``) into a
            # /proc/PID/fd/pipe:[N] that cannot be opened, and a link into its target, which
            # messages would name; the project gate compares real paths itself.
            config_file = given.absolute()
    env = Environment.from_process(config_file=config_file)
    env.check_config_file()
    return env


def load_config_in_effect(env: Environment) -> Config:
    """The configuration ``env`` names, as in effect (a file that is the project's is read only
    with the project gate open), its warnings shown as ``hermes: warning:`` lines."""
    from hermes_core._cli.output import warnings_to_stderr
    from hermes_core._config import config_in_effect

    with warnings_to_stderr():
        return config_in_effect(env)


def load_config_declared(env: Environment) -> Config:
    """The configuration in effect (:func:`load_config_in_effect`) with, when the file ``env``
    names is the project's and so not in effect, the MCP servers and shell hooks it declares:
    for the listings (``mcp list``, ``hooks list``), which mark each of them gated rather than
    show none. Nothing else of the file is taken: a host built from it (its plugins, hook
    directories, catalogs) loads only what the configuration in effect enables."""
    from hermes_core._cli.output import warnings_to_stderr
    from hermes_core._config import config_in_effect_and_why, load_config
    from hermes_core._hooks import EVENTS

    with warnings_to_stderr():
        effective, held_back = config_in_effect_and_why(env)
        if held_back is None:
            return effective
        written = load_config(env.config_path)
    hooks = effective.hooks.model_copy(
        update={event: getattr(written.hooks, event) for event in EVENTS}
    )
    return effective.model_copy(update={"mcp_servers": written.mcp_servers, "hooks": hooks})


def say_if_held_back(env: Environment) -> None:
    """After an edit of the file ``env`` names: a ``hermes: warning:`` when it is the project's
    and so not in effect (:func:`~hermes_core._config.config_held_back`), since the edit is
    saved but no command reads it."""
    import click

    from hermes_core._config import config_held_back

    held_back = config_held_back(env)
    if held_back is not None:
        click.echo(
            f"hermes: warning: {held_back}; saved, but not in effect: no command reads the "
            "file while the gate is closed",
            err=True,
        )
