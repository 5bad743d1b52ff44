"""``hermes doctor``: every check of a setup on one page, one line each, with what to do.

The checks reuse what the commands that show each part call (``config validate``, ``plugins
list``, ``hooks list``, ``skills list``, ``mcp test``): :mod:`.doctor_checks` reads files,
:mod:`.doctor_probes` asks the model server and the MCP servers, :mod:`.doctor_plugins` the
enabled plugins' own checks (``hermes_doctor_checks``), at once. Nothing else is called, run
or written: no tool, no other hook, no plugin that ``plugins.enabled`` (or a bundled default)
does not enable; only a stdio MCP server's log gets its standard error, as with ``mcp test``,
and the cache of parsed plugin manifests is kept as every command keeps it.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import TYPE_CHECKING

import click

from hermes_core._cli.context import environment
from hermes_core._cli.doctor_checks import (
    Check,
    code_execution_checks,
    config_checks,
    home_checks,
    hook_checks,
    not_checked,
    plugin_checks,
    project_checks,
    skill_checks,
)
from hermes_core._cli.output import columns

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._paths import Environment

ERROR_EXIT = 1
"""The exit status when a check is an error."""

_NEEDS_CONFIG = (("plugins", "plugins"), ("model", "model"), ("mcp", "servers"))
_NEEDS_CONFIG_TOO = (("hooks", "hooks"), ("skills", "skills"))


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the checks.")
@click.option(
    "--offline",
    is_flag=True,
    help=(
        "Send nothing: no request to the model server, no MCP server started, no plugin "
        "check that sends requests run."
    ),
)
def doctor(as_json: bool, offline: bool) -> None:
    """Check the setup: configuration, plugins, model, MCP servers, the enabled plugins' own
    checks, hooks, skills, home and project, one line each with what to do; exit 1 when a
    check is an error."""
    env = environment()
    config, found = config_checks(env)
    if config is None:
        why = "the configuration has an error (above)"
        found += [not_checked(g, n, why) for g, n in (*_NEEDS_CONFIG, *_NEEDS_CONFIG_TOO)]
    else:
        found += _with_plugins(config, env, offline=offline)
        found += hook_checks(config, env)
        found += skill_checks(config, env)
    found += home_checks(env)
    found += project_checks(env, _refused_servers(config, env))
    failed = any(check.status == "error" for check in found)
    if as_json:
        report = {"ok": not failed, "checks": [check.to_json() for check in found]}
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(_table(found))
    if failed:
        sys.exit(ERROR_EXIT)


def _with_plugins(config: Config, env: Environment, *, offline: bool) -> list[Check]:
    """The checks that need the plugins loaded (as every command loads them: the enabled
    ones), the model's, the MCP servers' and the plugins' own (``hermes_doctor_checks``) run
    at once."""
    import anyio

    from hermes_core._cli.config_cmd import selection_problems
    from hermes_core._cli.doctor_plugins import plugin_doctor_checks
    from hermes_core._cli.doctor_probes import declared_servers, mcp_checks, model_checks
    from hermes_core._cli.host_runs import cli_host

    with cli_host(config, env, strict=False) as host:
        host_log = logging.getLogger("hermes_core._host")
        level = host_log.level
        host_log.setLevel(logging.ERROR)  # each problem is a line of the report, once
        try:
            host.load_plugins()
            refused = selection_problems(config, host)
            model_refused = [p for kind, p in refused if kind == "model_provider"]
            found = plugin_checks(
                config, env, host, [p for kind, p in refused if kind != "model_provider"]
            )
            found += code_execution_checks(config, env, host)
            servers = declared_servers(config, env)

            async def probes() -> list[Check]:
                results: dict[str, list[Check]] = {}

                async def model() -> None:
                    results["model"] = await model_checks(host, model_refused, offline=offline)

                async def mcp() -> None:
                    results["mcp"] = await mcp_checks(servers, env, offline=offline)

                async def plugins() -> None:
                    results["plugins"] = await plugin_doctor_checks(host, offline=offline)

                async with anyio.create_task_group() as group:
                    group.start_soon(model)
                    group.start_soon(mcp)
                    group.start_soon(plugins)
                return [*results["model"], *results["mcp"], *results["plugins"]]

            found += anyio.run(probes)
        finally:
            host_log.setLevel(level)
    return found


def _refused_servers(config: Config | None, env: Environment) -> list[str]:
    """The MCP servers the project gate refuses to start here (none without a configuration)."""
    from hermes_core._cli.doctor_probes import declared_servers, gate_refusals

    return [] if config is None else list(gate_refusals(declared_servers(config, env), env))


def _table(found: list[Check]) -> str:
    """One row per check: group, name, status, the message (and the command that shows more);
    then how many errors and warnings. Text from outside is escaped (:func:`columns`)."""
    rows = [
        (
            c.group,
            c.name,
            c.status,
            f"{c.message} (see: {c.hint})" if c.hint and c.status != "ok" else c.message,
        )
        for c in found
    ]
    errors = sum(check.status == "error" for check in found)
    warnings = sum(check.status == "warning" for check in found)
    if errors or warnings:
        summary = f"{_count(errors, 'error')}, {_count(warnings, 'warning')}"
    else:
        summary = "no problem found"
    return f"{columns(rows)}\n\n{summary}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
