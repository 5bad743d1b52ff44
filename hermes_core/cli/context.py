"""What every ``hermes`` subcommand starts from: the environment, with ``--config`` applied."""

from __future__ import annotations

from pathlib import Path

import click

from hermes_core.paths import Environment


def environment() -> Environment:
    """The process environment, using the file given to ``hermes --config`` when there is one."""
    ctx = click.get_current_context(silent=True)
    config_file: Path | None = None
    while ctx is not None:
        if isinstance(ctx.obj, dict) and ctx.obj.get("config_file") is not None:
            config_file = ctx.obj["config_file"]
            break
        ctx = ctx.parent
    return Environment.from_process(config_file=config_file)
