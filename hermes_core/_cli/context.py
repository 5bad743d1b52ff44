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
            config_file = given.resolve()
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


def load_config_as_written(env: Environment) -> Config:
    """The configuration file ``env`` names as written, even one that is the project's and
    so not in effect (:func:`~hermes_core._config.config_in_effect`): for the listings of what
    it declares (``mcp list``, ``hooks list``), which mark each entry the project gate holds
    back, rather than show none."""
    from hermes_core._cli.output import warnings_to_stderr
    from hermes_core._config import load_config

    with warnings_to_stderr():
        return load_config(env.config_path)
