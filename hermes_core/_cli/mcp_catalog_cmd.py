"""``hermes mcp catalog``: the curated MCP servers shipped with hermes-core, listed, and one
installed after a probe shows that it answers."""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING

import click

from hermes_core._cli.context import environment
from hermes_core._cli.mcp_options import check_name, pairs_option
from hermes_core._cli.output import columns, did_you_mean
from hermes_core._errors import HermesError

if TYPE_CHECKING:
    from hermes_core._config import McpServerConfig
    from hermes_core._paths import Environment


@click.group("catalog", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
@click.pass_context
def catalog(ctx: click.Context, as_json: bool) -> None:
    """List the curated MCP servers shipped with hermes-core (none is enabled until installed).

    'hermes mcp catalog install NAME' adds one after checking that it answers.
    """
    if ctx.invoked_subcommand is not None:
        return
    from hermes_core._mcp.catalog import load_catalog

    servers = load_catalog(environment())
    if as_json:
        click.echo(json.dumps([server.to_json() for server in servers.values()], indent=2))
        return
    table = [("name", "command", "needs", "description")]
    for server in servers.values():
        command = " ".join((server.command, *server.args))
        table.append((server.name, command, ", ".join(server.required_env), server.description))
    click.echo(columns(table, free=(1, 2, 3)))
    click.echo("\nInstall one with: hermes mcp catalog install NAME [--env KEY=VALUE]")


@catalog.command("install")
@click.argument("name")
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    help="A required variable, KEY=VALUE; the value goes to $HERMES_HOME/.env, never config.yaml.",
)
@click.option("--as", "server_name", help="Install under another server name.")
@click.option("--force", is_flag=True, help="Replace a configured server of the same name.")
def install_command(
    name: str, env_pairs: tuple[str, ...], server_name: str | None, force: bool
) -> None:
    """Probe catalog server NAME and, when it answers, add it to mcp_servers.

    A failed probe writes nothing. Required variables are taken from --env, the environment or
    $HERMES_HOME/.env.
    """
    import anyio

    from hermes_core._mcp.catalog import load_catalog
    from hermes_core._mcp.install import install_catalog_server

    env = environment()
    servers = load_catalog(env)
    server = servers.get(name)
    if server is None:
        raise HermesError(
            f"no server {name!r} in the catalog (have: {', '.join(servers)})."
            f"{did_you_mean(name, servers)}"
        )
    target = server_name or name
    check_name(target)
    given = pairs_option(env_pairs, "--env")
    extra = sorted(set(given) - set(server.required_env))
    if extra:
        raise click.BadParameter(
            f"{name} does not use {', '.join(extra)} (it needs: "
            f"{', '.join(server.required_env) or 'nothing'})",
            param_hint="--env",
        )

    def probing(config: McpServerConfig) -> None:
        click.echo(f"Probing {name}: {' '.join((config.command or '', *config.args))}", err=True)

    _, report = anyio.run(
        partial(install_catalog_server, env, server, target, given, force=force, on_probe=probing)
    )
    click.echo(
        f"Installed {name} as mcp_servers.{target} in {env.config_path} "
        f"({len(report.tools)} tools answered in {report.connect_seconds * 1000:.0f} ms)."
    )
    if given:
        click.echo(f"Saved {', '.join(given)} to {env.dotenv_path}.")
    warn_if_gated(env, target)


def warn_if_gated(env: Environment, name: str) -> None:
    """Warn that server ``name``, just written to config.yaml, is held back by the gate on a
    project's config file (``hermes mcp add`` and ``catalog install``)."""
    from hermes_core._mcp.install import not_started_note

    note = not_started_note(env, name)
    if note is not None:
        click.echo(f"hermes: warning: {note}", err=True)
