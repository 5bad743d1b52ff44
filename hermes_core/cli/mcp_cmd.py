"""``hermes mcp``: list, add, remove and test MCP servers, and install curated ones.

``list`` and ``test`` connect for real (``list`` through a :class:`~hermes_core.host.Host`, as an
agent would); ``add``, ``remove`` and ``catalog install`` edit config.yaml keeping its comments.
Secrets never go into config.yaml: ``--env KEY=VALUE`` writes the value to
``$HERMES_HOME/.env`` and the entry gets ``KEY: ${KEY}``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from hermes_core.cli.context import environment, load_config_in_effect
from hermes_core.cli.output import columns
from hermes_core.errors import HermesError

if TYPE_CHECKING:
    from hermes_core.config import Config, McpServerConfig
    from hermes_core.mcp.probe import ProbeReport
    from hermes_core.mcp.supervisor import ServerStatus
    from hermes_core.paths import Environment


def _check_name(name: str) -> None:
    from hermes_core.config import MCP_SERVER_NAME_RULE, check_mcp_server_name

    try:
        check_mcp_server_name(name)
    except ValueError:
        raise click.BadParameter(MCP_SERVER_NAME_RULE, param_hint="NAME") from None


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    """``KEY=VALUE`` option values as a mapping; a value without ``=`` is refused."""
    pairs: dict[str, str] = {}
    for value in values:
        key, found, rest = value.partition("=")
        key = key.strip()
        if not found or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint=option)
        pairs[key] = rest
    return pairs


def _server(config: Config, name: str) -> McpServerConfig:
    entry = config.mcp_servers.get(name)
    if entry is None:
        known = ", ".join(sorted(config.mcp_servers)) or "none"
        raise HermesError(f"no MCP server {name!r} in mcp_servers (configured: {known})")
    return entry


@click.group("mcp")
def mcp() -> None:
    """List, add, remove and test MCP servers; install curated ones from the catalog."""


# list -------------------------------------------------------------------------------------


def _status_json(status: ServerStatus) -> dict[str, Any]:
    return {
        "name": status.name,
        "transport": status.transport,
        "status": status.state,
        "reason": status.reason,
        "tool_count": status.tool_count,
        "filtered_count": status.filtered_count,
        "unmatched_patterns": list(status.unmatched_patterns),
        "protocol_version": status.protocol_version,
    }


async def _statuses(config: Config, env: Environment) -> dict[str, ServerStatus]:
    from hermes_core.host import Host

    async with Host(config, env, config_path=env.config_path) as host:
        return host.mcp_status()


@mcp.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
def list_command(as_json: bool) -> None:
    """Connect to every configured server and show its transport, status and tool counts."""
    import anyio

    env = environment()
    config = load_config_in_effect(env)
    statuses = anyio.run(_statuses, config, env) if config.mcp_servers else {}
    rows = [statuses[name] for name in config.mcp_servers if name in statuses]
    if as_json:
        click.echo(json.dumps([_status_json(status) for status in rows], indent=2))
        return
    if not rows:
        click.echo(f"No MCP servers configured in {env.config_path}.")
        return
    table = [("name", "transport", "status", "tools", "filtered", "note")]
    for status in rows:
        note = status.reason or ""
        if status.state == "disabled":
            note = ""
        if status.unmatched_patterns:
            unmatched = f"patterns matching nothing: {', '.join(status.unmatched_patterns)}"
            note = f"{note}; {unmatched}" if note else unmatched
        table.append(
            (
                status.name,
                status.transport,
                status.state,
                str(status.tool_count),
                str(status.filtered_count),
                note,
            )
        )
    click.echo(columns(table))


# add / remove -----------------------------------------------------------------------------


def _write_server(
    env: Environment, name: str, entry: dict[str, Any], secrets: dict[str, str], *, force: bool
) -> None:
    """Write ``secrets`` to ``.env`` and ``entry`` to ``mcp_servers.NAME``, or nothing at all
    when the server exists (without ``force``) or the configuration cannot be edited."""
    from hermes_core.config import edit_config
    from hermes_core.mcp.secrets import save_secrets

    with edit_config(env) as document:
        if document.get(f"mcp_servers.{name}") is not None and not force:
            raise HermesError(
                f"mcp_servers.{name} already exists in {env.config_path}; "
                "use --force to replace it, or 'hermes mcp remove' first"
            )
        document.set(f"mcp_servers.{name}", entry)
        document.validate()
        if secrets:
            save_secrets(env.dotenv_path, secrets)


def _with_secret_templates(entry: dict[str, Any], secrets: dict[str, str]) -> dict[str, Any]:
    if secrets:
        entry["env"] = {key: f"${{{key}}}" for key in secrets}
    return entry


@mcp.command("add")
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", help="A streamable HTTP server instead of a command.")
@click.option("--header", "headers", multiple=True, help="An HTTP header, K=V (with --url).")
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    help="A secret for a stdio server, KEY=VALUE: the value goes to $HERMES_HOME/.env and the "
    "entry gets KEY: ${KEY}.",
)
@click.option("--force", is_flag=True, help="Replace a server of the same name.")
def add_command(
    name: str,
    command: tuple[str, ...],
    url: str | None,
    headers: tuple[str, ...],
    env_pairs: tuple[str, ...],
    force: bool,
) -> None:
    """Add server NAME: 'hermes mcp add NAME -- COMMAND [ARGS...]' (stdio) or
    'hermes mcp add NAME --url URL [--header K=V]' (streamable HTTP)."""
    _check_name(name)
    if (url is None) == (not command):
        raise click.UsageError("give either '-- COMMAND [ARGS...]' or '--url URL', not both")
    if headers and url is None:
        raise click.UsageError("--header goes with --url")
    if env_pairs and url is not None:
        raise click.UsageError("--env goes with a command; put secrets in headers as ${VAR}")
    secrets = _pairs(env_pairs, "--env")
    entry: dict[str, Any]
    if url is not None:
        entry = {"url": url}
        if headers:
            entry["headers"] = _pairs(headers, "--header")
    else:
        entry = _with_secret_templates({"command": command[0], "args": list(command[1:])}, secrets)
    env = environment()
    _write_server(env, name, entry, secrets, force=force)
    click.echo(f"Added MCP server {name!r} to {env.config_path}.")


@mcp.command("remove")
@click.argument("name")
def remove_command(name: str) -> None:
    """Remove server NAME from mcp_servers."""
    from hermes_core.config import edit_config

    env = environment()
    with edit_config(env) as document:
        if not document.delete(f"mcp_servers.{name}"):
            known = ", ".join(sorted(document.get("mcp_servers") or {})) or "none"
            raise HermesError(f"no MCP server {name!r} in mcp_servers (configured: {known})")
    click.echo(f"Removed MCP server {name!r} from {env.config_path}.")


# test -------------------------------------------------------------------------------------


async def _probe(name: str, config: McpServerConfig, env: Environment) -> ProbeReport:
    from hermes_core.mcp.connection import McpConnectError
    from hermes_core.mcp.probe import probe_server

    try:
        return await probe_server(name, config, env)
    except McpConnectError as exc:
        raise HermesError(f"MCP server {name!r} did not answer the probe: {exc.reason}") from None


def _print_probe(report: ProbeReport, as_json: bool) -> None:
    if as_json:
        data = {
            "name": report.server,
            "protocol_version": report.protocol_version,
            "connect_seconds": round(report.connect_seconds, 3),
            "tools": [
                {"name": t.name, "description": t.description, "filtered": not t.kept}
                for t in report.tools
            ],
            "unmatched_patterns": list(report.unmatched_patterns),
        }
        click.echo(json.dumps(data, indent=2))
        return
    kept = sum(1 for tool in report.tools if tool.kept)
    click.echo(
        f"{report.server}: connected and listed {len(report.tools)} tools in "
        f"{report.connect_seconds * 1000:.0f} ms (protocol {report.protocol_version}); "
        f"{kept} kept, {len(report.tools) - kept} filtered"
    )
    for tool in report.tools:
        summary = tool.description.splitlines()[0] if tool.description else ""
        marker = "" if tool.kept else " [filtered]"
        click.echo(f"  {tool.name}{marker}  {summary}".rstrip())
    for pattern in report.unmatched_patterns:
        click.echo(f"hermes: warning: the pattern {pattern!r} matches none of its tools", err=True)


@mcp.command("test")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def test_command(name: str, as_json: bool) -> None:
    """Connect to server NAME, list its tools and print them with the time it took (also for a
    disabled server)."""
    import anyio

    env = environment()
    entry = _server(load_config_in_effect(env), name)
    report = anyio.run(_probe, name, entry, env)
    _print_probe(report, as_json)


# catalog ----------------------------------------------------------------------------------


@mcp.group("catalog", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
@click.pass_context
def catalog(ctx: click.Context, as_json: bool) -> None:
    """List the curated MCP servers shipped with hermes-core (none is enabled until installed).

    'hermes mcp catalog install NAME' adds one after checking that it answers.
    """
    if ctx.invoked_subcommand is not None:
        return
    from hermes_core.mcp.catalog import load_catalog

    servers = load_catalog(environment())
    if as_json:
        click.echo(json.dumps([server.to_json() for server in servers.values()], indent=2))
        return
    table = [("name", "command", "needs", "description")]
    for server in servers.values():
        command = " ".join((server.command, *server.args))
        table.append((server.name, command, ", ".join(server.required_env), server.description))
    click.echo(columns(table))
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

    from hermes_core.config import McpServerConfig, edit_config
    from hermes_core.mcp.catalog import load_catalog
    from hermes_core.mcp.expand import server_variables
    from hermes_core.paths import Environment

    env = environment()
    servers = load_catalog(env)
    server = servers.get(name)
    if server is None:
        raise HermesError(f"no server {name!r} in the catalog (have: {', '.join(servers)})")
    target = server_name or name
    _check_name(target)
    given = _pairs(env_pairs, "--env")
    extra = sorted(set(given) - set(server.required_env))
    if extra:
        raise click.BadParameter(
            f"{name} does not use {', '.join(extra)} (it needs: "
            f"{', '.join(server.required_env) or 'nothing'})",
            param_hint="--env",
        )
    known = server_variables(env)
    missing = [key for key in server.required_env if key not in given and not known.get(key)]
    if missing:
        flags = " ".join(f"--env {key}=..." for key in missing)
        raise HermesError(f"{name} needs {', '.join(missing)}: pass {flags}")
    # Refuse early (managed config, existing server) so nothing is started for nothing.
    with edit_config(env) as document:
        if document.get(f"mcp_servers.{target}") is not None and not force:
            raise HermesError(
                f"mcp_servers.{target} already exists in {env.config_path}; use --force to "
                "replace it, or --as NAME to install it under another name"
            )
    entry = server.server_entry(python=sys.executable)
    config = McpServerConfig.model_validate(entry)
    probe_env = Environment(
        home=env.home,
        cwd=env.cwd,
        variables={**env.variables, **given},
        python_version=env.python_version,
        config_file=env.config_file,
    )
    click.echo(f"Probing {name}: {' '.join((config.command or '', *config.args))}", err=True)
    try:
        report = anyio.run(_probe, target, config, probe_env)
    except HermesError as exc:
        raise HermesError(f"{exc}; nothing was written (install hint: {server.install})") from None
    _write_server(env, target, entry, given, force=force)
    click.echo(
        f"Installed {name} as mcp_servers.{target} in {env.config_path} "
        f"({len(report.tools)} tools answered in {report.connect_seconds * 1000:.0f} ms)."
    )
    if given:
        click.echo(f"Saved {', '.join(given)} to {env.dotenv_path}.")
