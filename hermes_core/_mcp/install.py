"""Writing a server into ``mcp_servers``, and installing one from the catalog after a probe.

Used by ``hermes mcp add`` and ``hermes mcp catalog install`` and by ``manage_connections``: a
server is written only after its secrets are in ``$HERMES_HOME/.env`` and the edited
configuration validated; a catalog server only after it answered a probe. Otherwise nothing
is written.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from hermes_core._config import McpServerConfig, edit_config
from hermes_core._errors import HermesError
from hermes_core._mcp.catalog import CatalogServer
from hermes_core._mcp.connection import McpConnectError
from hermes_core._mcp.expand import server_variables
from hermes_core._mcp.probe import ProbeReport, probe_server
from hermes_core._mcp.secrets import save_home_secrets
from hermes_core._paths import Environment
from hermes_core._project_trust import config_refusal

__all__ = ["install_catalog_server", "not_started_note", "probe_failure", "write_server"]


def write_server(
    env: Environment, name: str, entry: dict[str, Any], secrets: dict[str, str], *, force: bool
) -> None:
    """Write ``secrets`` to ``.env`` and ``entry`` to ``mcp_servers.NAME``, or nothing at all
    when the server exists (without ``force``) or the configuration cannot be edited."""
    with edit_config(env) as document:
        if document.get(f"mcp_servers.{name}") is not None and not force:
            raise HermesError(
                f"mcp_servers.{name} already exists in {env.config_path}; "
                "use --force to replace it, or 'hermes mcp remove' first"
            )
        document.set(f"mcp_servers.{name}", entry)
        document.validate()
        if secrets:
            save_home_secrets(env, secrets)


def not_started_note(env: Environment, name: str) -> str | None:
    """Why server ``name``, just written to ``env.config_path``, will not be started by hermes
    run as this command was (the project gate is closed on a config file in the project:
    ``HERMES_HOME=./.hermes``), or ``None``. The server is written all the same: the file is the
    one hermes reads, and opening the gate is the user's to decide."""
    refusal = config_refusal(env, env.config_path, "the MCP servers of the config")
    if refusal is None:
        return None
    return (
        f"MCP server {name!r} will not be started (hermes mcp list shows it 'gated'): {refusal}, "
        f"or when the file is named on the command line (hermes --config {env.config_path} ...)"
    )


def probe_failure(exc: McpConnectError) -> str:
    """Why a probe failed, with the server's last lines of standard error on the lines after;
    a server the project gate refused was never started, so never asked: said so."""
    if exc.refused:
        why = exc.reason.removeprefix("not started: ")
        return f"MCP server {exc.server!r} was refused by the project gate (not started): {why}"
    return "\n".join(
        (f"MCP server {exc.server!r} did not answer the probe: {exc.reason}", *exc.output_lines())
    )


async def install_catalog_server(
    env: Environment,
    server: CatalogServer,
    target: str,
    given: Mapping[str, str],
    *,
    force: bool = False,
    on_probe: Callable[[McpServerConfig], None] | None = None,
) -> tuple[dict[str, Any], ProbeReport]:
    """Probe catalog ``server`` and, when it answers, add it as ``mcp_servers.<target>`` (its
    required variables from ``given``, the environment or ``.env``; ``given`` ones are saved to
    ``.env``). Returns the written entry and the probe's report.

    Raises :class:`~hermes_core._errors.HermesError` (writing nothing) when a required variable
    is missing, the server exists (without ``force``), the configuration is managed, or the
    probe failed (its message says why, with the install hint).
    """
    known = server_variables(env)
    missing = [key for key in server.required_env if key not in given and not known.get(key)]
    if missing:
        flags = " ".join(f"--env {key}=..." for key in missing)
        raise HermesError(f"{server.name} needs {', '.join(missing)}: pass {flags}")
    # Refuse early (managed config, existing server) so nothing is started for nothing.
    with edit_config(env) as document:
        if document.get(f"mcp_servers.{target}") is not None and not force:
            raise HermesError(
                f"mcp_servers.{target} already exists in {env.config_path}; use --force to "
                "replace it, or --as NAME to install it under another name"
            )
    entry = server.server_entry(python=sys.executable)
    config = McpServerConfig.model_validate(entry)
    probe_env = replace(env, variables={**env.variables, **given})
    if on_probe is not None:
        on_probe(config)
    try:
        report = await probe_server(target, config, probe_env)
    except McpConnectError as exc:
        first, *rest = probe_failure(exc).split("\n")
        hint = f"{first}; nothing was written (install hint: {server.install})"
        raise HermesError("\n".join((hint, *rest))) from None
    write_server(env, target, entry, dict(given), force=force)
    return entry, report
