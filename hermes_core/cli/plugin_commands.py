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
    """The commands of the enabled plugins, by name, loaded as every command loads plugins (a
    host, without catalogs or MCP servers). A name claimed twice is an error naming both
    plugins (:class:`~hermes_core.errors.RegistrationError` in strict mode)."""
    from hermes_core.config import load_config
    from hermes_core.host import Host

    host = Host(load_config(env.config_path), env, config_path=env.config_path)
    host.load_plugins()
    try:
        return {name: found.spec.command for name, found in host.registrations.cli_commands.items()}
    finally:
        host.close()
