"""``hermes serve``: run the host as one MCP server over stdio or streamable HTTP;
``hermes serve token`` prints (or rotates) the bearer token HTTP clients send."""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

import click

from hermes_core._cli.context import environment, load_config_in_effect
from hermes_core._cli.output import configure_logging, plugin_prints_to_stderr

WAITING_ON_A_TERMINAL = (
    "hermes serve: waiting for an MCP client on stdin (this is not a prompt): configure your "
    "MCP client (Claude Desktop, Claude Code, Cursor) to start `hermes serve`, see docs/mcp.md "
    '"Serving to MCP clients"; Ctrl-C stops it.'
)
"""The one line ``hermes serve`` prints on stderr when its stdin is a terminal (stdio only)."""
AT_THE_ROOT = (
    "hermes serve: the working directory is {root} (the file tools, terminal and execute_code "
    "reach every file from there); `hermes -C DIR serve` sets the project directory "
    '(docs/mcp.md, "Claude Desktop")'
)
"""The line ``hermes serve`` prints on stderr when it was started in a filesystem root without
``-C`` (Claude Desktop may start its servers in ``/``)."""
NO_AUTH_WARNING = (
    "hermes serve: warning: serving without authentication (--no-auth): any local account, "
    "and anyone who can reach {address}, can read your files, run commands and change your "
    "config through hermes; drop --no-auth to require the token of `hermes serve token`."
)
"""The line ``hermes serve --no-auth`` prints on stderr once it serves, before its URL."""
BEYOND_LOOPBACK_WARNING = (
    "hermes serve: warning: {address} is reachable beyond this machine's loopback, and hermes "
    "serves plain HTTP, so the bearer token and every call and result cross the network "
    "unencrypted, and whoever sees them can use the token to run commands as you; reach it "
    "through an SSH tunnel or a TLS proxy, or listen on 127.0.0.1."
)
"""The line ``hermes serve --transport http`` prints on stderr once it serves, before its URL,
when it listens on an address that is not a loopback one (``0.0.0.0``, a LAN address)."""
TOKEN_HINT = (
    "hermes serve: clients must send 'Authorization: Bearer <token>'; "
    "`hermes serve token` prints the token."
)
"""The line ``hermes serve --transport http`` prints on stderr after its URL."""


@click.group("serve", invoke_without_command=True)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a client that starts hermes itself; http for streamable HTTP.",
)
@click.option(
    "--host",
    "address",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (http). Anything but a loopback address exposes your tools.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (http); 0 picks a free one.",
)
@click.option(
    "--context-length",
    type=click.IntRange(min=1),
    default=None,
    help="The client model's context length in tokens; sizes the tool listing.",
)
@click.option(
    "--no-auth",
    is_flag=True,
    help="Serve http without the bearer token (any local account gets in; prints a warning).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Another Host name or address clients use to reach http (repeatable).",
)
@click.pass_context
def serve(
    ctx: click.Context,
    transport: str,
    address: str,
    port: int,
    context_length: int | None,
    no_auth: bool,
    allow_hosts: tuple[str, ...],
) -> None:
    """Serve every tool of hermes to an MCP client as one MCP server.

    Over stdio nothing but protocol is written to stdout; logs go to stderr, and when stdin is
    a terminal one line there says that serve waits for an MCP client. Over http every request
    must carry 'Authorization: Bearer <token>' (`hermes serve token` prints it) and name this
    server in its Host header; the URL is printed on stderr once requests are served. Calls
    that need approval are asked through the client when it supports MCP elicitation;
    otherwise approvals.non_interactive applies (deny by default).
    """
    if ctx.invoked_subcommand is not None:
        return
    _refuse_http_options_for_default_stdio(ctx)
    from hermes_core._gc_pause import pause_for_start

    # Until the first tool list is built (serving_host ends the pause): the MCP SDK's import
    # and the host's start make objects that all survive, and collections would walk them.
    pause_for_start()
    import anyio

    from hermes_core._serve import serve_http, serve_stdio

    configure_logging("hermes serve", with_names=True)
    env = environment()
    config = load_config_in_effect(env)
    _hint_at_the_root(ctx)

    if transport == "stdio":
        if sys.stdin.isatty():
            # Started by hand, a server silently reading the terminal looks like a hang; a
            # client starts it with pipes and gets nothing but protocol.
            click.echo(WAITING_ON_A_TERMINAL, err=True)
        anyio.run(
            lambda: serve_stdio(
                config, env, config_path=env.config_path, context_length=context_length
            )
        )
        return

    def listening(url: str) -> None:
        from hermes_core._addresses import loopback_host

        # Here, not before serving: with --port 0 only the bound socket knows the port.
        if not loopback_host(urlsplit(url).hostname or ""):
            click.echo(BEYOND_LOOPBACK_WARNING.format(address=urlsplit(url).netloc), err=True)
        if no_auth:
            click.echo(NO_AUTH_WARNING.format(address=urlsplit(url).netloc), err=True)
        click.echo(f"hermes serve: listening on {url}", err=True)
        if not no_auth:
            click.echo(TOKEN_HINT, err=True)

    with plugin_prints_to_stderr():  # stdio's own serve_stdio claims stdout itself
        anyio.run(
            lambda: serve_http(
                config,
                env,
                host=address,
                port=port,
                config_path=env.config_path,
                context_length=context_length,
                on_listening=listening,
                require_token=not no_auth,
                allow_hosts=allow_hosts,
            )
        )


@serve.command("token")
@click.option("--rotate", is_flag=True, help="Replace the token: the old one stops working.")
def token(rotate: bool) -> None:
    """Print the bearer token HTTP clients of `hermes serve` send (made at first use).

    The token lives in $HERMES_HOME/serve-token, readable by you only. Use it as
    'Authorization: Bearer $(hermes serve token)'. With --rotate a new token replaces it; a
    running hermes serve takes the new one at its next request.
    """
    from hermes_core._serve.token import read_or_create_token, rotate_token

    path = environment().serve_token_path
    click.echo(rotate_token(path) if rotate else read_or_create_token(path))
    if rotate:
        click.echo(f"hermes serve: new token in {path}; the old one no longer works.", err=True)


def _hint_at_the_root(ctx: click.Context) -> None:
    """One line on stderr (never stdout, the stdio protocol's) when serve runs in a filesystem
    root it was not sent to with ``-C``: a client that sets no working directory leaves the
    tools the whole disk, and the user would not know. Only the root: the home directory is
    where a terminal opens, and serving it is a person's choice, said at every start it would be
    noise."""
    import os
    from pathlib import Path

    from click.core import ParameterSource

    cwd = Path(os.getcwd())
    if cwd != Path(cwd.anchor):
        return
    if ctx.find_root().get_parameter_source("directory") is ParameterSource.COMMANDLINE:
        return  # -C / is the user's choice
    click.echo(AT_THE_ROOT.format(root=cwd), err=True)


_HTTP_OPTIONS = {
    "address": "--host",
    "port": "--port",
    "no_auth": "--no-auth",
    "allow_hosts": "--allow-host",
}


def _refuse_http_options_for_default_stdio(ctx: click.Context) -> None:
    """An option of http with no ``--transport`` is a usage error: ``hermes serve --port 9999``
    means HTTP, and serving stdio, the default, would leave the user waiting on a port nobody
    listens on. (An explicit ``--transport stdio`` is taken at its word.)"""
    from click.core import ParameterSource

    if ctx.get_parameter_source("transport") is not ParameterSource.DEFAULT:
        return
    given = [
        flag
        for name, flag in _HTTP_OPTIONS.items()
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    ]
    if given:
        raise click.UsageError(
            f"{', '.join(given)} {'is an option' if len(given) == 1 else 'are options'} of "
            "--transport http; add it (stdio, the default, is for a client that starts hermes "
            "and talks over its pipes)",
            ctx,
        )
