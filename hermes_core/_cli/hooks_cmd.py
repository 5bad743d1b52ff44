"""``hermes hooks``: list the shell hooks and hook directories, enable and disable directories.

Listing imports only the hook directories ``hooks.enabled`` names (to report their import
errors), never the others, and never stops at a broken one: it shows it, and exits 1 then.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.context import (
    environment,
    load_config_declared,
)
from hermes_core._cli.enabling import edit_lists, unmatched_names
from hermes_core._cli.output import columns, exit_if_broken, verbose

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._hooks.directories import HookDirectory
    from hermes_core._paths import Environment


@click.group("hooks")
def hooks() -> None:
    """List shell hooks and hook directories; enable and disable hook directories."""


def shell_rows(config: Config, env: Environment) -> list[dict[str, Any]]:
    """One row per shell hook of ``config``: its key, event, match, timeout, command and status
    (``enabled``, ``not runnable`` with a ``message`` naming the missing command and its key,
    or why the project keeps it from running there, ``gated`` with the gate's refusal); also
    ``hermes doctor``'s."""
    from hermes_core._hooks import EVENTS
    from hermes_core._hooks.shell import cannot_run
    from hermes_core._project_trust import config_refusal

    # The config file in effect is the project's, the gate closed: its shell hooks do not run.
    refusal = config_refusal(env, env.config_path, "the shell hooks of the config file")
    rows = []
    for event in EVENTS:
        for index, hook in enumerate(getattr(config.hooks, event)):
            key = f"hooks.{event}[{index}]"
            # As a call started here meets it: refused by the project, or its command missing.
            missing = None if refusal else cannot_run(hook.command, env)
            row = {
                "kind": "shell",
                "name": key,
                "event": event,
                "match": hook.match,
                "timeout": hook.timeout,
                "status": "gated" if refusal else "not runnable" if missing else "enabled",
                "command": hook.command,
            }
            if refusal:
                row["message"] = refusal
            elif missing:
                row["message"] = f"{missing} ({key} in {env.config_path})"
            rows.append(row)
    return rows


@hooks.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
def list_command(as_json: bool) -> None:
    """One row per shell hook of config.yaml and per hook directory of $HERMES_HOME/hooks;
    exit 1 when one is broken (``error``, ``not runnable``), as ``skills list`` does."""
    from hermes_core._hooks.directories import gated_warning, load_hook_directories

    env = environment()
    config = load_config_declared(env)
    directories, warnings = load_hook_directories(
        config, env, strict=False, config_path=env.config_path
    )
    unmatched = unmatched_names(
        "hooks",
        (config.hooks.enabled, config.hooks.disabled),
        (directory.name for directory in directories),
        what="hook directory",
        config_path=env.config_path,
    )
    # A gated directory's row says what it takes: the warning about it would repeat it.
    shown = {gated_warning(d) for d in directories if d.status == "gated"}
    for warning in [*(w for w in warnings if w not in shown), *unmatched]:
        click.echo(f"hermes: warning: {warning}", err=True)
    rows = shell_rows(config, env) + [
        {"kind": "directory", **directory.to_json()} for directory in directories
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        click.echo(
            f"No shell hooks in {env.config_path} and no hook directories in {env.hooks_dir}."
        )
    else:
        _print_table(rows, directories)
    exit_if_broken(rows, lambda row: row["status"] in ("error", "not runnable"))


def _print_table(rows: list[dict[str, Any]], directories: list[HookDirectory]) -> None:
    table: list[tuple[str, ...]] = [("name", "kind", "event", "match", "timeout", "status", "note")]
    for row in rows:
        note = row.get("message") or row.get("command") or row.get("description") or ""
        table.append(
            (
                row["name"],
                row["kind"],
                row["event"] or "",
                row["match"] or "",
                f"{row['timeout']:g} s" if row["timeout"] is not None else "",
                row["status"],
                note,
            )
        )
    click.echo(columns(table))
    if verbose():
        for directory in directories:
            if directory.traceback:
                click.echo(f"\n{directory.name}:\n{directory.traceback}", err=True)


def _directory_names(config: Config, env: Environment) -> list[str]:
    from hermes_core._hooks import plan_hook_directories

    directories, _ = plan_hook_directories(config, env, config_path=env.config_path)
    return [directory.name for directory in directories]


@hooks.command("enable")
@click.argument("name")
def enable_command(name: str) -> None:
    """Enable hook directory NAME: add it to hooks.enabled, remove it from hooks.disabled."""
    edit_lists(
        name,
        section="hooks",
        enable=True,
        known=_directory_names,
        what="hook directory",
        blocker=_will_not_load,
    )


@hooks.command("disable")
@click.argument("name")
def disable_command(name: str) -> None:
    """Disable hook directory NAME: add it to hooks.disabled, remove it from hooks.enabled."""
    edit_lists(name, section="hooks", enable=False, known=_directory_names, what="hook directory")


def _will_not_load(config: Config, env: Environment, name: str) -> str | None:
    """Why the hook directory ``name`` will not load with ``config``: gated (the gate's
    verdict; its code is not run), or ``None``."""
    from hermes_core._hooks.directories import plan_hook_directories, why_gated

    directories, _ = plan_hook_directories(config, env, config_path=env.config_path)
    gated = next((d for d in directories if d.name == name and d.status == "gated"), None)
    return why_gated(gated) if gated is not None else None
