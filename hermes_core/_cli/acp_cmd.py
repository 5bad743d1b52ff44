"""``hermes acp``: hermes as an Agent Client Protocol agent for editors (Zed, and any ACP
client), over stdio. Needs the ``acp`` install extra (``agent-client-protocol``)."""

from __future__ import annotations

import sys

import click

from hermes_core._cli.context import environment, load_config_in_effect
from hermes_core._cli.output import configure_logging
from hermes_core._errors import HermesError

WAITING_ON_A_TERMINAL = (
    "hermes acp: waiting for an ACP client on stdin (this is not a prompt): configure your "
    "editor (Zed's agent_servers, any ACP client) to start `hermes acp`, see docs/acp.md; "
    "Ctrl-C stops it."
)
"""The one line ``hermes acp`` prints on stderr when its stdin is a terminal."""
MISSING_EXTRA = (
    "hermes acp needs the Agent Client Protocol SDK: pip install 'hermes-core-agent[acp]'"
)
"""What ``hermes acp`` says when the ``acp`` extra is not installed."""
SDK_MINOR = "0.12"
"""The minor version of agent-client-protocol hermes speaks (the ``acp`` extra's pin in
pyproject.toml: each minor version changes the schema)."""


@click.command("acp")
def acp() -> None:
    """Run hermes as an ACP agent for an editor, over stdio.

    An editor (Zed's agent_servers, any Agent Client Protocol client) starts `hermes acp` and
    speaks JSON-RPC on its stdin and stdout; nothing else is written to stdout, logs go to
    stderr. The model is config.yaml's `model` section; see docs/acp.md.
    """
    import importlib.util

    if importlib.util.find_spec("acp") is None:
        raise HermesError(MISSING_EXTRA)  # `hermes: error: ...`, status 2, as every missing extra
    _check_sdk_version()
    from hermes_core._acp.stdio import run_stdio

    configure_logging("hermes acp", with_names=True)
    if sys.stdin.isatty():
        # Started by hand, an agent silently reading the terminal looks like a hang.
        click.echo(WAITING_ON_A_TERMINAL, err=True)
    env = environment()
    # The configuration is read once initialize is answered: an editor waits for that answer.
    run_stdio(env, lambda: load_config_in_effect(env))


def _check_sdk_version() -> None:
    """A :class:`HermesError` when the installed agent-client-protocol is not of
    :data:`SDK_MINOR` (upgraded past the extra's pin); none when its version is unknown."""
    from importlib import metadata

    try:
        version = metadata.version("agent-client-protocol")
    except metadata.PackageNotFoundError:  # imported from a checkout: nothing to compare
        return
    if version.split(".")[:2] != SDK_MINOR.split("."):
        raise HermesError(
            f"hermes acp speaks the Agent Client Protocol SDK {SDK_MINOR}, not the "
            f"agent-client-protocol {version} installed: pip install 'hermes-core-agent[acp]'"
        )
