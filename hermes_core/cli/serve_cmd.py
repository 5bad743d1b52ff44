"""``hermes serve``: run the host as one MCP server over stdio or streamable HTTP."""

from __future__ import annotations

import sys

import click

from hermes_core.cli.context import environment, load_config_in_effect
from hermes_core.cli.output import configure_logging

WAITING_ON_A_TERMINAL = (
    "hermes serve: waiting for an MCP client on stdin (this is not a prompt): configure your "
    "MCP client (Claude Desktop, Claude Code, Cursor) to start `hermes serve`, see docs/mcp.md "
    '"Serving to MCP clients"; Ctrl-C stops it.'
)
"""The one line ``hermes serve`` prints on stderr when its stdin is a terminal (stdio only)."""


@click.command("serve")
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
def serve(transport: str, address: str, port: int, context_length: int | None) -> None:
    """Serve every tool of hermes to an MCP client as one MCP server.

    Over stdio nothing but protocol is written to stdout; logs go to stderr, and when stdin is
    a terminal one line there says that serve waits for an MCP client. Over http the URL is
    printed on stderr once requests are served. Calls that need approval are asked through the
    client when it supports MCP elicitation; otherwise approvals.non_interactive applies (deny
    by default).
    """
    import anyio

    from hermes_core.serve import serve_http, serve_stdio

    configure_logging("hermes serve", with_names=True)
    env = environment()
    config = load_config_in_effect(env)

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
        click.echo(f"hermes serve: listening on {url}", err=True)

    anyio.run(
        lambda: serve_http(
            config,
            env,
            host=address,
            port=port,
            config_path=env.config_path,
            context_length=context_length,
            on_listening=listening,
        )
    )
