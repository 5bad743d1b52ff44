"""``hermes connectors``: sign in to the connector gateway, see and connect apps, and run the
reference gateway.

``login`` stores the token in ``$HERMES_HOME/auth.json`` (mode 0600, atomic; from a hidden
prompt, or standard input with ``--token-stdin``) and ``logout`` removes it; the token is never
printed. ``status`` says whether connectors are in scope (or why not), the gateway and each app
with its connection state. ``connect`` asks for a link per app and, on a terminal, waits for the
user to open it. ``dev-gateway`` serves the gateway protocol from a fixture file.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from hermes_core._cli.context import environment, load_config_in_effect
from hermes_core._cli.output import columns, echo_shown
from hermes_core._errors import HermesError

if TYPE_CHECKING:
    from hermes_core.connectors._service import Connectors

T = TypeVar("T")

UNAVAILABLE_EXIT = 1
"""The exit status of ``status`` when the gateway did not answer, and of ``connect`` when it
failed or an app did not get connected (2 stays for configuration and usage errors)."""


@click.group("connectors")
def connectors() -> None:
    """Sign in to the connector gateway, list and connect apps, run the reference gateway."""


def _with_connectors(work: Callable[[Connectors], Awaitable[T]]) -> T:
    """Start a host (plugins only: no MCP server is connected), run ``work`` with its
    connectors on one event loop, and release the gateway."""
    import anyio

    from hermes_core._cli.host_runs import cli_host

    env = environment()
    config = load_config_in_effect(env)

    async def main() -> T:
        try:
            return await work(host.connectors)
        finally:
            await host.connectors.aclose()

    with cli_host(config, env) as host:
        host.start()
        if host.connectors.configured():
            host.select_connector_gateway()  # an unknown name: exit 2, listing the valid ones
        return anyio.run(main)


@connectors.command("login")
@click.option("--token-stdin", is_flag=True, help="Read the token from standard input.")
def login_command(token_stdin: bool) -> None:
    """Sign in: store the gateway token in $HERMES_HOME/auth.json (mode 0600)."""
    from hermes_core.connectors._signin import TOKEN_VARIABLE, save_token

    env = environment()
    if token_stdin:
        token = sys.stdin.read()
    elif sys.stdin.isatty():
        token = click.prompt("Connector gateway token", hide_input=True, err=True)
    else:
        raise click.UsageError(
            "standard input is not a terminal: give the token with --token-stdin"
        )
    path = save_token(env, token)
    click.echo(f"Signed in: the token is saved in {path}.")
    if env.get(TOKEN_VARIABLE):
        click.echo(f"Note: {TOKEN_VARIABLE} is set, and is used instead while it is.")
    if not load_config_in_effect(env).tools.connectors.url:
        click.echo(
            "Connectors also need the gateway URL: hermes config set tools.connectors.url URL"
        )


@connectors.command("logout")
def logout_command() -> None:
    """Sign out: remove the token from $HERMES_HOME/auth.json."""
    from hermes_core.connectors._signin import TOKEN_VARIABLE, auth_path, remove_token

    env = environment()
    if remove_token(env):
        click.echo(f"Signed out: the token is removed from {auth_path(env)}.")
    else:
        click.echo(f"Not signed in: {auth_path(env)} holds no token.")
    if env.get(TOKEN_VARIABLE):
        click.echo(f"Note: {TOKEN_VARIABLE} is set, so hermes is still signed in while it is.")


async def _status(service: Connectors) -> dict[str, Any]:
    from hermes_core.connectors._signin import sign_in_again

    scope = service.scope()
    sign_in = service.sign_in()
    report: dict[str, Any] = {
        "in_scope": scope.in_scope,
        "reason": scope.reason,
        "message": scope.message or None,
        "gateway": service.config.gateway,
        "url": service.config.url,
        "signed_in": sign_in.signed_in,
        "token_source": sign_in.source,
        "connectors": [],
        "error": None,
    }
    if scope.in_scope:
        listing = await service.states()
        if listing.failure is not None:
            report["error"] = {"kind": listing.failure.kind, "message": listing.failure.message}
            if listing.failure.kind == "signed_out":
                report["error"]["message"] += f": {sign_in_again(sign_in)}"
        else:
            report["connectors"] = [
                {"name": item.connector, "connected": item.connected, "state": item.status}
                for item in listing.items
            ]
    return report


@connectors.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def status_command(as_json: bool) -> None:
    """Whether connectors are in scope (or why not), the gateway, and each app with its
    connection state; exit status 1 when the gateway did not answer."""
    report = _with_connectors(_status)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        scope = "in scope" if report["in_scope"] else f"not in scope: {report['message']}"
        source = {"environment": "HERMES_CONNECTORS_TOKEN", "file": "auth.json"}
        signed = f"yes ({source[report['token_source']]})" if report["signed_in"] else "no"
        rows = [
            ("connectors:", scope),
            ("gateway:", f"{report['gateway']} ({report['url'] or 'no tools.connectors.url'})"),
            ("signed in:", signed),
        ]
        click.echo(columns(rows))
        if report["error"] is not None:
            # It quotes the gateway's own words: escaped on a terminal.
            echo_shown(f"hermes: error: {report['error']['message']}", err=True)
        apps = [
            (item["name"], "connected" if item["connected"] else "not connected", item["state"])
            for item in report["connectors"]
        ]
        if apps:
            click.echo("")
            click.echo(columns([("APP", "CONNECTION", "STATE"), *apps]))
    if report["error"] is not None:
        sys.exit(UNAVAILABLE_EXIT)


@connectors.command("connect")
@click.argument("apps", nargs=-1, required=True)
@click.option(
    "--wait/--no-wait",
    default=None,
    help="Wait for the user to open the links (default: on a terminal).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    help="Seconds to wait.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    default=3.0,
    show_default=True,
    help="Seconds between checks.",
)
def connect_command(
    apps: tuple[str, ...], wait: bool | None, timeout: float, interval: float
) -> None:
    """Connect APPS: print a link per app to open in a browser and, waiting, report each as
    connected, skipped (the gateway could not start it) or not connected. Exit status 1 when
    the gateway fails, and, waiting, unless every app got connected; not waiting, when an app
    was skipped."""
    from hermes_core.connectors._manage import ConnectionsFailed, wait_for_connections

    waiting = sys.stdin.isatty() if wait is None else wait

    def show(name: str, url: str) -> None:
        echo_shown(f"Open this link to connect {name}: {url}", err=True)  # the gateway's link

    async def work(service: Connectors) -> dict[str, str]:
        scope = service.scope()
        if not scope.in_scope:
            raise HermesError(f"hosted connectors are not available: {scope.message}")
        limit = timeout if waiting else 0.0
        found = await wait_for_connections(
            service, list(apps), timeout=limit, interval=interval, on_link=show
        )
        return dict(found)

    try:
        outcome = _with_connectors(work)
    except ConnectionsFailed as exc:
        echo_shown(f"hermes: error: {exc}", err=True)  # it may quote the gateway
        sys.exit(UNAVAILABLE_EXIT)
    for name, state in outcome.items():
        shown = "open the link above" if not waiting and state == "not connected" else state
        if state == "skipped":
            shown = "skipped (the gateway could not start a connection for it)"
        click.echo(f"{name}: {shown}")
    # Not waiting, a link printed is done; an app the gateway could not start (a misspelt
    # name) is not, or a script would go on as if it were.
    unfinished = [state for state in outcome.values() if waiting or state == "skipped"]
    if any(state != "connected" for state in unfinished):
        sys.exit(UNAVAILABLE_EXIT)


@connectors.command("dev-gateway")
@click.option(
    "--fixtures",
    "fixtures_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The fixture file (JSON) of connectors and tools to serve.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="The port (default: a free one)."
)
def dev_gateway_command(fixtures_file: Path, host: str, port: int) -> None:
    """Serve the connector gateway protocol from a fixture file, until interrupted: the
    reference gateway to try hermes against. It prints 'listening on http://HOST:PORT/' on
    standard error once it accepts connections."""
    from hermes_core.testing._devgateway import DevGateway, listening_line
    from hermes_core.testing._gateway_fixtures import load_fixtures

    fixtures = load_fixtures(fixtures_file)
    try:
        gateway = DevGateway(fixtures, host, port)
    except OSError as exc:
        raise HermesError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None

    def stop(signum: int, frame: Any) -> NoReturn:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    click.echo(listening_line(gateway.url), err=True)
    try:
        gateway.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        gateway.close()
