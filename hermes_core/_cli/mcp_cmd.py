"""``hermes mcp``: list, add, remove and test MCP servers, and install curated ones.

``list`` reads through a :class:`~hermes_core._host.Host`, as ``hermes tools list`` does: a server
whose tool manifest is fresh is shown ``known`` (with the manifest's age) without being started,
one whose connect failed within its ``retry_interval`` as unavailable with the recorded reason,
and the others are connected (``--refresh`` connects every one). ``test`` always connects. Both
exit 1 when a server did not answer; ``add``, ``remove``
and ``catalog install`` edit config.yaml keeping its comments. Secrets never go into
config.yaml: a literal ``--env`` or credential ``--header`` value, the password or a secret
query value of a ``--url`` (``https://me:pw@host/mcp?token=t``), or the value of a secret flag
of the server's command (``-- server --api-key sk-...``), is written to ``$HERMES_HOME/.env``
and the entry gets a ``${VAR}`` reference to it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection
from functools import partial
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.context import environment, load_config_declared, say_if_held_back
from hermes_core._cli.mcp_catalog_cmd import catalog, warn_if_gated
from hermes_core._cli.mcp_options import check_name, headers_option, pairs_option
from hermes_core._cli.mcp_reports import (
    manifest_age,
    output_lines,
    print_probe,
    status_json,
    status_note,
    statuses_printed_instead_of_warnings,
)
from hermes_core._cli.output import (
    columns,
    did_you_mean,
    echo_shown,
    exit_if_broken,
)
from hermes_core._errors import HermesError

if TYPE_CHECKING:
    from hermes_core._config import Config, McpServerConfig
    from hermes_core._mcp.supervisor import ServerStatus
    from hermes_core._paths import Environment

UNAVAILABLE_EXIT = 1
"""The exit status of ``mcp list`` and ``mcp test`` when a server did not answer (2 stays for a
wrong command or configuration)."""


def _server(config: Config, name: str) -> McpServerConfig:
    entry = config.mcp_servers.get(name)
    if entry is None:
        raise _unknown_server(name, config.mcp_servers)
    return entry


def _startable_server(env: Environment, name: str) -> McpServerConfig:
    """Server ``name`` for ``mcp test`` and ``mcp login``, which start it: one that a project's
    config file the gate holds back declares is named as such (``not_started_note``), not as
    unknown."""
    from hermes_core._mcp.install import not_started_note

    entry = _server(load_config_declared(env), name)
    note = not_started_note(env, name)
    if note is not None:
        raise HermesError(note)
    return entry


def _unknown_server(name: str, configured: Collection[str]) -> HermesError:
    known = ", ".join(sorted(configured)) or "none"
    return HermesError(
        f"no MCP server {name!r} in mcp_servers (configured: {known})."
        f"{did_you_mean(name, configured)}"
    )


@click.group("mcp")
def mcp() -> None:
    """List, add, remove and test MCP servers; install curated ones from the catalog."""


mcp.add_command(catalog)


# list -------------------------------------------------------------------------------------


async def _statuses(config: Config, env: Environment, refresh: bool) -> dict[str, ServerStatus]:
    from hermes_core._cli.host_runs import cli_host
    from hermes_core._cli.progress import connect_progress
    from hermes_core._mcp.startup import McpStartup

    startup = McpStartup(read_only=True, refresh=refresh)
    progress = connect_progress()
    try:
        with (
            statuses_printed_instead_of_warnings(),
            cli_host(config, env, mcp_startup=startup, mcp_progress=progress) as built,
        ):
            async with built as host:
                return host.mcp_status()
    finally:
        if progress is not None:
            progress.close()


@mcp.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
@click.option(
    "--refresh",
    is_flag=True,
    help="Connect every server instead of answering from the cached tool manifests.",
)
def list_command(as_json: bool, refresh: bool) -> None:
    """Show each configured server's transport, state (known from its tool manifest,
    connected, unavailable, disabled, gated), tool counts and manifest age; servers the cache cannot
    answer for are connected. Exit 1 when a server is unavailable."""
    import anyio

    from hermes_core._mcp.serverlog import server_log_path

    env = environment()
    config = load_config_declared(env)
    statuses = anyio.run(_statuses, config, env, refresh) if config.mcp_servers else {}
    rows = [statuses[name] for name in config.mcp_servers if name in statuses]
    if as_json:
        click.echo(json.dumps([status_json(status) for status in rows], indent=2))
        exit_if_broken(rows, lambda status: status.state in ("connecting", "unavailable"))
        return
    if not rows:
        click.echo(f"No MCP servers configured in {env.config_path}.")
        return
    table = [("name", "transport", "status", "tools", "filtered", "manifest", "note")]
    for status in rows:
        table.append(
            (
                status.name,
                status.transport,
                status.state,
                str(status.tool_count),
                str(status.filtered_count),
                manifest_age(status),
                status_note(status, config),
            )
        )
    click.echo(columns(table))
    for status in rows:
        for line in output_lines(status):
            echo_shown(line)
    if any(status.log_path is not None for status in rows):
        pattern = server_log_path(env, "NAME")
        click.echo(f"The standard error of stdio servers is logged in {pattern}.")
    exit_if_broken(rows, lambda status: status.state in ("connecting", "unavailable"))


# add / remove -----------------------------------------------------------------------------


@mcp.command("add")
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--url",
    help="A streamable HTTP server instead of a command; a password or secret query value "
    "(?token=, ?api_key=...) in it goes to $HERMES_HOME/.env and the URL gets ${VAR}.",
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    help="An HTTP header, K=V or 'K: V' (with --url); a literal credential (Authorization, *key*, "
    "*token*...) goes to $HERMES_HOME/.env and the entry gets a ${VAR} reference.",
)
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    help="A variable for a stdio server, KEY=VALUE: a literal value goes to $HERMES_HOME/.env "
    "and the entry gets KEY: ${KEY} (${NAME_KEY} when .env holds KEY with another value).",
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
    'hermes mcp add NAME --url URL [--header 'K: V']' (streamable HTTP).

    The value of a secret flag in ARGS ('--api-key sk-...', '--token=...', a credential
    '--header') goes to $HERMES_HOME/.env as NAME_API_KEY... and ARGS get ${NAME_API_KEY};
    write '${VAR}' yourself to use a variable you already have."""
    from hermes_core._dotenv import read_dotenv
    from hermes_core._mcp.install import write_server
    from hermes_core._mcp.interpreter import resolve_bare_python
    from hermes_core._mcp.secrets import describe_moved, move_secrets
    from hermes_core._mcp.self_serve import SERVES_ITSELF, serves_this_hermes

    check_name(name)
    if url is not None and command:
        raise click.UsageError("give '-- COMMAND [ARGS...]' or '--url URL', not both")
    if url is None and not command:
        raise click.UsageError(
            "give the server's command ('-- COMMAND [ARGS...]') or its URL ('--url URL')"
        )
    if headers and url is None:
        raise click.UsageError("--header goes with --url")
    if env_pairs and url is not None:
        raise click.UsageError("--env goes with a command; put secrets in headers as ${VAR}")
    env = environment()
    entry: dict[str, Any]
    notes: list[str] = []
    if url is not None:
        entry = {"url": url}
        if headers:
            entry["headers"] = headers_option(headers)
    else:
        program = command[0]
        resolved = resolve_bare_python(program, env.get("PATH"))
        if resolved is not None:
            notes.append(
                f"{program} is {resolved} here; the entry keeps that path, so the server runs on "
                "this Python however hermes is started."
            )
            program = resolved
        entry = {"command": program, "args": list(command[1:])}
        if env_pairs:
            entry["env"] = pairs_option(env_pairs, "--env")
        if serves_this_hermes(entry, env, env.config_path):
            raise HermesError(
                f"refusing to add MCP server {name!r}: {SERVES_ITSELF} ({env.config_path}), "
                "and that copy would start another. 'hermes serve' is for MCP clients (docs/"
                "mcp.md); to use another hermes's tools here, name its home (--env "
                "HERMES_HOME=DIR) or its file ('hermes --config FILE serve')"
            )
    moved = move_secrets(
        name, entry, environment=env.variables, dotenv=read_dotenv(env.dotenv_path)
    )
    write_server(env, name, moved.entry, moved.to_save, force=force)
    click.echo(f"Added MCP server {name!r} to {env.config_path}.")
    for note in notes:
        click.echo(note)
    if moved.references:
        click.echo(describe_moved(moved.references, env.dotenv_path))
    warn_if_gated(env, name)


@mcp.command("remove")
@click.argument("name")
def remove_command(name: str) -> None:
    """Remove server NAME from mcp_servers."""
    from hermes_core._config import edit_config

    env = environment()
    with edit_config(env) as document:
        if not document.delete(f"mcp_servers.{name}"):
            raise _unknown_server(name, list(document.get("mcp_servers") or {}))
    click.echo(f"Removed MCP server {name!r} from {env.config_path}.")
    say_if_held_back(env)


# test -------------------------------------------------------------------------------------


@mcp.command("test")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def test_command(name: str, as_json: bool) -> None:
    """Connect to server NAME, list its tools and print them with the time it took (also for a
    disabled server); exit 1 when it does not answer."""
    import anyio

    from hermes_core._mcp.connection import McpConnectError
    from hermes_core._mcp.install import probe_failure
    from hermes_core._mcp.probe import probe_server
    from hermes_core._mcp.serverlog import server_log_path

    env = environment()
    entry = _startable_server(env, name)
    try:
        report = anyio.run(probe_server, name, entry, env)
    except McpConnectError as exc:
        echo_shown(f"hermes: error: {probe_failure(exc)}", err=True)
        sys.exit(UNAVAILABLE_EXIT)
    print_probe(report, as_json, server_log_path(env, name) if entry.url is None else None)


# login and logout -------------------------------------------------------------------------


@mcp.command("login")
@click.argument("name")
@click.option(
    "--no-browser", is_flag=True, help="Print the sign-in URL instead of opening a browser."
)
def login_command(name: str, no_browser: bool) -> None:
    """Sign in to the URL server NAME (OAuth): open the browser (or print the URL), wait for
    the authorization server to send it back to hermes, keep the tokens under the home; then
    connect and list its tools. Exit 1 when that fails."""
    import anyio

    from hermes_core._mcp.connection import McpConnectError
    from hermes_core._mcp.login import sign_in
    from hermes_core._mcp.tokens import token_path

    env = environment()
    entry = _startable_server(env, name)
    if entry.url is None:
        raise HermesError(
            f"MCP server {name!r} is a stdio server (mcp_servers.{name}.command): "
            "only a 'url' server signs in with hermes mcp login"
        )

    def say(text: str) -> None:
        echo_shown(text)  # the server's authorization address among it

    try:
        count, asked = anyio.run(
            partial(sign_in, name, entry, env, say=say, open_browser=not no_browser)
        )
    except McpConnectError as exc:
        failed = f"hermes: error: sign-in to {name!r} failed: {exc.reason}"
        echo_shown(failed, err=True)
        sys.exit(UNAVAILABLE_EXIT)
    if not asked:
        click.echo(f"{name!r} did not ask for sign-in: it lists {count} tools.")
        return
    click.echo(
        f"Signed in to {name!r}: it lists {count} tools. "
        f"The sign-in is kept in {token_path(env, name)}."
    )


@mcp.command("logout")
@click.argument("name")
def logout_command(name: str) -> None:
    """Forget the sign-in of server NAME (its tokens and registered client, and the tool
    manifest listed while signed in)."""
    from hermes_core._mcp.manifests import ManifestStore
    from hermes_core._mcp.oauth import sign_out, token_path

    env = environment()
    path = token_path(env, name)
    configured = load_config_declared(env).mcp_servers
    if name not in configured and not path.exists():
        # A mistyped name would otherwise "succeed" and leave the real sign-in in place; the
        # sign-in of a server already removed from mcp_servers can still be forgotten.
        raise _unknown_server(name, configured)
    if name in configured:  # else `mcp list` would show the tools listed while signed in
        ManifestStore(env.cache_dir / "mcp").path(name, configured[name]).unlink(missing_ok=True)
    if sign_out(name, env):
        click.echo(f"Signed out of {name!r} (removed {path}).")
    else:
        click.echo(f"No sign-in kept for {name!r} ({path} does not exist).")
