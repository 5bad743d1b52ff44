"""``hermes plugins``: list, inspect, enable and disable plugins.

Listing never runs the code of a plugin that is not enabled: it reads directories, manifests and
distribution metadata. It loads the plugins the configuration enables as every command does (a
host, without catalogs or MCP servers: imported, registration hooks and ``hermes_tools`` called)
and builds the search backend, approval policy and gateway the configuration selects from a
plugin that is not bundled, so every failure shows as its plugin's error. ``list`` and ``info``
never raise for a broken plugin, even with ``HERMES_STRICT_PLUGINS``: they exist to show it.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from hermes_core._cli.context import environment, load_config_in_effect
from hermes_core._cli.enabling import edit_lists, unmatched_names
from hermes_core._cli.output import (
    columns,
    did_you_mean,
    exit_if_broken,
    verbose,
)
from hermes_core._errors import HermesError
from hermes_core._paths import Environment
from hermes_core._shown import printable_lines

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._plugins.plugin_tools import ToolOverride
    from hermes_core._plugins.records import PluginRecord


def _load(
    env: Environment,
) -> tuple[list[PluginRecord], dict[str, list[str]], list[ToolOverride]]:
    """Every plugin copy, after loading the enabled ones as a host does, what each loaded
    plugin registered by name, and the tools that override another of their name; what
    discovery ignored and what the configuration selects but no plugin provides are
    warnings."""
    from hermes_core._cli.host_runs import cli_host
    from hermes_core._plugins.explain import gated_warning
    from hermes_core._plugins.plugin_tools import tool_overrides

    config = load_config_in_effect(env)
    # The listing shows every plugin error itself: the host's log lines would repeat them.
    with _host_log_muted(), cli_host(config, env, strict=False) as host:
        host.load_plugins()
        problems = host.check_plugins()
        # The hooks' warnings are hermes hooks list's.
        hooks = set(host.hook_warnings)
        records = host.plugins
        warnings = [warning for warning in host.warnings if warning not in hooks]
        registered = host.registrations.by_plugin()
        overrides = list(tool_overrides(host.registry, records).values())

    unmatched = unmatched_names(
        "plugins",
        (config.plugins.enabled, config.plugins.disabled),
        (record.name for record in records),
        what="plugin",
        config_path=env.config_path,
    )
    # A gated plugin's row says what it takes: the host's warning about it would repeat it.
    shown = {gated_warning(record) for record in records if record.status == "gated"}
    for warning in [*(w for w in warnings if w not in shown), *problems, *unmatched]:
        click.echo(f"hermes: warning: {warning}", err=True)
    return records, registered, overrides


@click.group("plugins")
def plugins() -> None:
    """List, inspect, enable and disable plugins."""


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="In the table, also show every shadowed copy as its own row (--json always does).",
)
def list_command(as_json: bool, show_all: bool) -> None:
    """One row per plugin: name, version, source, status, hooks, shadows, note (why it does not
    load, or what to do); exit 1 when one is in ``error``, as ``skills list`` does."""
    records, _, _ = _load(environment())
    _show(records, as_json, show_all)
    exit_if_broken(records, lambda record: record.status == "error")


def _show(records: list[PluginRecord], as_json: bool, show_all: bool) -> None:
    if as_json:
        # Every copy, so a program can see what shadows what without a second call.
        click.echo(json.dumps([record.to_json() for record in records], indent=2))
        return
    rows = [r for r in records if show_all or r.status != "shadowed"]
    if not rows:
        click.echo("No plugins found.")
        return
    header = ("name", "version", "source", "status", "hooks", "shadows", "note")
    table: list[tuple[str, ...]] = [header]
    for record in rows:
        note = " ".join((record.message or "").split())  # one row a plugin, whatever it said
        if record.shadowed_by:
            note = f"shadowed by {record.shadowed_by}"
        hooks = ", ".join(hook.removeprefix("hermes_") for hook in record.hooks)
        table.append(
            (
                record.name,
                record.version or "",
                record.source,
                record.status,
                hooks,
                ", ".join(record.shadows),
                note,
            )
        )
    click.echo(columns(table))
    if verbose():
        for record in rows:
            if record.traceback:
                click.echo(f"\n{record.name} ({record.source}):\n{record.traceback}", err=True)


@plugins.command("info")
@click.argument("name")
def info_command(name: str) -> None:
    """Everything known about plugin NAME: each copy found, its manifest and its status."""
    from hermes_core._plugins.manifest import normalize_name

    records, registered, overrides = _load(environment())
    wanted = normalize_name(name)
    copies = [record for record in records if record.name == wanted]
    if not copies:
        hint = did_you_mean(wanted, (record.name for record in records))
        raise HermesError(
            f"no plugin named {wanted!r} was found.{hint} (see: hermes plugins list --all)"
        )
    for index, record in enumerate(copies):
        if index:
            click.echo("")
        # Only the copy that loaded registered anything.
        names = registered.get(record.name, []) if record.loadable else []
        for label, value in _info_lines(record, names, overrides if record.winner else []):
            # A manifest is read before the gate: a cloned project's plugin.yaml writes these.
            click.echo(f"{label + ':':<17}{printable_lines(value)}")
        if record.traceback and verbose():
            click.echo(record.traceback, err=True)


def _info_lines(
    record: PluginRecord, registers: list[str], overrides: list[ToolOverride]
) -> list[tuple[str, str]]:
    manifest = record.candidate.manifest
    lines = [
        ("name", record.name),
        ("version", record.version or ""),
        ("source", record.source),
        ("status", record.status),
        ("path", str(record.path or "")),
    ]
    if record.candidate.entry_point is not None:
        lines.append(("entry point", record.candidate.entry_point.value))
    if manifest is not None:
        lines += [
            ("kind", manifest.kind),
            ("description", manifest.description),
            ("author", manifest.author),
            ("homepage", manifest.homepage),
            ("license", manifest.license),
            ("provides tools", ", ".join(manifest.provides_tools)),
            ("requires env", ", ".join(manifest.requires_env)),
            ("requires plugins", ", ".join(manifest.requires_plugins)),
            ("requires hermes", str(manifest.requires_hermes or "")),
        ]
    lines += [
        ("hooks", ", ".join(record.hooks)),
        ("registers", ", ".join(registers)),
        (
            "overrides",
            ", ".join(f"{o.name} ({o.replaced})" for o in overrides if o.by == record.name),
        ),
        (
            "overridden",
            ", ".join(f"{o.name} (by {o.replacer})" for o in overrides if o.owner == record.name),
        ),
        ("shadows", ", ".join(record.shadows)),
        ("shadowed by", record.shadowed_by or ""),
        ("error" if record.status == "error" else "note", record.message or ""),
    ]
    return [(label, value) for label, value in lines if value]


@plugins.command("enable")
@click.argument("name")
def enable_command(name: str) -> None:
    """Enable plugin NAME: add it to plugins.enabled and remove it from plugins.disabled.

    When the plugin will still not load (a project plugin behind the closed gate, a broken
    manifest, a module that raises on import), says why and what to do; the name is enabled
    all the same."""
    from hermes_core._cli.config_cmd import checked_edit

    edit_lists(
        name,
        section="plugins",
        enable=True,
        known=_plugin_names,
        what="plugin",
        blocker=_will_not_load,
        checked=checked_edit,
    )


@plugins.command("disable")
@click.argument("name")
def disable_command(name: str) -> None:
    """Disable plugin NAME: add it to plugins.disabled and remove it from plugins.enabled.

    Refused, as hermes config set refuses it, when the edited file would have problems: the
    plugin provides the search backend, approval policy, model provider... in use, say."""
    from hermes_core._cli.config_cmd import checked_edit

    edit_lists(
        name,
        section="plugins",
        enable=False,
        known=_plugin_names,
        what="plugin",
        checked=checked_edit,
    )


def _plugin_names(config: Config, env: Environment) -> list[str]:
    from hermes_core._plugins.loader import plan_plugins

    records, _ = plan_plugins(config, env, config_path=env.config_path)
    return [record.name for record in records]


def _will_not_load(config: Config, env: Environment, name: str) -> str | None:
    """Why the plugin ``name`` will not load with ``config``, or ``None``: the gate's verdict
    first (a gated plugin's code is not run); else, unless the file is held back (read by no
    command while the project gate is closed), the plugins are loaded as the next command loads
    them, so that a plugin raising on import or in its registration hooks is said now,
    by the command that enabled it, not by whichever command comes next."""

    from hermes_core._cli.host_runs import cli_host
    from hermes_core._config import config_held_back
    from hermes_core._plugins.explain import unloaded_plugin, why_not_loaded
    from hermes_core._plugins.loader import plan_plugins

    records, _ = plan_plugins(config, env, config_path=env.config_path)
    record = unloaded_plugin(records, name)
    if record is not None:
        return why_not_loaded(record)
    if config_held_back(env) is not None:
        return None  # no command reads the file (said above): nothing of it is loaded now
    # The other plugins' failures are not this command's news: the host's log lines are muted.
    with _host_log_muted(), cli_host(config, env, strict=False) as host:
        host.load_plugins()
        record = unloaded_plugin(host.plugins, name)
    return why_not_loaded(record) if record is not None else None


@contextlib.contextmanager
def _host_log_muted() -> Iterator[None]:
    """The host's log lines below errors muted in the block (a command that says each plugin's
    problem itself)."""
    host_log = logging.getLogger("hermes_core._host")
    level = host_log.level
    host_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        host_log.setLevel(level)
