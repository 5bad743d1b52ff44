"""Subcommands contributed by enabled plugins through the ``hermes_cli_commands`` hook.

Loaded only when ``hermes`` is asked for a command it does not have built in, or for its help,
so ``hermes --version`` and the built-in commands never pay for loading plugins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

    from hermes_core.paths import Environment


def plugin_commands(env: Environment) -> dict[str, click.Command]:
    """The commands of the enabled plugins, by name (a name claimed twice raises
    :class:`~hermes_core.errors.RegistrationError` naming both plugins)."""
    from hermes_core.config import load_config
    from hermes_core.plugins.loader import STRICT_FLAG, load_plugins
    from hermes_core.plugins.registrations import collect_registrations

    config = load_config(env.config_path)
    strict = env.flag(STRICT_FLAG)
    plugin_set = load_plugins(config, env, config_path=env.config_path, strict=strict)
    registrations = collect_registrations(
        plugin_set.pm, plugin_set.records, strict=strict, kinds=["cli_command"]
    )
    return {name: found.spec.command for name, found in registrations.cli_commands.items()}
