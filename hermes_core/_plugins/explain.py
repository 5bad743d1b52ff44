"""Why a plugin did not load, and what to do about it: one sentence for every place that meets
a name some plugin should have provided (an unknown search backend, approval policy or
connector gateway, a tool a manifest lists in ``provides_tools``) or that enables a plugin
which will still not load; and, since a long-running host (``hermes serve``) reads its
configuration file once, a tool of a plugin enabled or of an MCP server added there since."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core._errors import HermesError
from hermes_core._mcp.names import may_name_a_tool_of
from hermes_core._plugin_names import normalize_name
from hermes_core._plugins.records import PluginRecord
from hermes_core._project_trust import PROJECT_GATE_FLAG, config_refusal

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._paths import Environment

__all__ = [
    "added_mcp_server",
    "enabled_but_gated",
    "may_register",
    "may_register_text",
    "missing_tool",
    "remedy",
    "unloaded_plugin",
    "why_not_loaded",
]

_NEXT_START = (
    "at hermes' next start (restart this hermes; for hermes serve, restart or reconnect its "
    "server in your MCP client)"
)


def unloaded_plugin(records: Iterable[PluginRecord], name: str) -> PluginRecord | None:
    """The copy of the plugin called ``name`` that would take part, when it did not load (is
    gated, disabled, not enabled or broken); ``None`` when there is no plugin of that name or it
    loaded (or, before loading, is let through by the gate). A gated project copy counts when
    no other copy takes part."""
    wanted = normalize_name(name)
    copies = [record for record in records if record.name == wanted]
    winner = next((record for record in copies if record.winner), None)
    if winner is None:
        winner = next((record for record in copies if record.status == "gated"), None)
    if winner is None or winner.loadable:
        return None
    return winner


def may_register(records: Iterable[PluginRecord], hook: str) -> list[PluginRecord]:
    """Each plugin found that did not load (not enabled, gated, disabled, broken) and may
    implement ``hook``: a name nothing registers is most often one of theirs (installed, never
    enabled), which nothing else could say since no code of theirs ran. A plugin whose
    manifest lists its hooks without ``hook`` is left out: it says it has no such hook; so is
    one that failed but stays registered (a name two plugins register): its hooks were asked."""
    return [
        record
        for record in records
        if (record.status == "gated" or (record.winner and not record.loadable))
        and record.plugin is None
        and _may_provide(record, hook)
    ]


def may_register_text(unloaded: list[PluginRecord], verb: str) -> str:
    """`` Plugins that did not load may register it: ...``: each of ``unloaded`` (``verb``:
    what they would do with the name), why it did not load and how to load it, three at most."""
    listed = "; ".join(why_not_loaded(record) for record in unloaded[:3])
    more = len(unloaded) - 3
    listed += f"; and {more} more (hermes plugins list)" if more > 0 else ""
    return f". Plugins that did not load may {verb} it: {listed}"


def _may_provide(record: PluginRecord, hook: str) -> bool:
    """Whether ``record``'s manifest leaves room for ``hook``: it lists no hooks, or this one."""
    manifest = record.candidate.manifest
    return manifest is None or not manifest.provides_hooks or hook in manifest.provides_hooks


def enabled_but_gated(records: Iterable[PluginRecord], enabled: Iterable[str]) -> list[str]:
    """``x is enabled but will not load: plugin 'x' (project, ...) is gated: ...``: a warning
    for each plugin that ``enabled`` (``plugins.enabled``) names whose only copy is a gated
    project one, so that an embedder learns it at start rather than from a missing tool. A
    gated plugin nothing enables is no news: a cloned project's plugins are gated by design."""
    records = list(records)
    warned: list[str] = []
    for name in dict.fromkeys(normalize_name(name) for name in enabled):
        record = unloaded_plugin(records, name)
        if record is not None and record.status == "gated":
            warned.append(gated_warning(record))
    return warned


def gated_warning(record: PluginRecord) -> str:
    """The warning :func:`enabled_but_gated` gives for the gated ``record``: a listing that
    shows the record's own message leaves it out."""
    return f"{record.name} is enabled but will not load: {why_not_loaded(record)}"


def missing_tool(
    records: Iterable[PluginRecord],
    tool: str,
    config_path: Path | None,
    env: Environment | None = None,
) -> str | None:
    """Why the tool ``tool``, which the registry lacks, is missing when a plugin's manifest lists
    it in ``provides_tools`` (the one table of which plugin provides which tool): the plugin did
    not load (how to make it load, or, when ``config_path`` enables it now, that it was enabled
    after this host read the file), or it loaded and registered no such tool here (what its
    manifest's description says it needs: a setting, an extra); ``config_path`` is the
    configuration file in effect, read for ``env``. ``None`` when no plugin lists ``tool``."""
    records = list(records)
    listing = [
        record
        for record in records
        if record.candidate.manifest is not None
        and tool in record.candidate.manifest.provides_tools
    ]
    record = next((record for record in listing if record.winner), None)
    if record is None:
        record = next((record for record in listing if record.status == "gated"), None)
    if record is None:
        return _shadowed_tool(records, listing, tool)
    if config_path is not None and env is not None and _enabled_since(record, config_path, env):
        return (
            f"{tool!r} is a tool of a plugin that did not load: {_where(record)} is enabled in "
            f"{config_path} since this hermes started: it loads {_NEXT_START}"
        )
    in_file = f" (the configuration in effect: {config_path})" if config_path is not None else ""
    if not record.loadable:
        return (
            f"{tool!r} is a tool of a plugin that did not load: {why_not_loaded(record)}{in_file}"
        )
    manifest = record.candidate.manifest
    assert manifest is not None
    needs = f": {manifest.description.rstrip('.')}" if manifest.description else ""
    return (
        f"{tool!r} is a tool of the plugin {record.name!r} ({record.source}), which is enabled "
        f"but did not register it here; its manifest says what it needs{needs}{in_file}"
    )


def added_mcp_server(
    tool: str, config_path: Path | None, env: Environment, servers: Iterable[str]
) -> str | None:
    """Why ``tool``, which the registry lacks, is missing when it names a tool of an MCP server
    that ``config_path`` holds now and ``servers`` (those of the configuration the host read)
    do not: added since the host started (and disabled, when it is); ``None`` otherwise."""
    if config_path is None or not tool.startswith("mcp__"):
        return None
    running = set(servers)
    config = _file_now(config_path, env)
    if config is None:
        return None
    for server, entry in config.mcp_servers.items():
        if server in running or not may_name_a_tool_of(tool, server):
            continue
        added = f"{tool!r} would be a tool of the MCP server {server!r}, added to {config_path}"
        if not entry.enabled:
            return (
                f"{added} since this hermes started, and disabled there "
                f"(mcp_servers.{server}.enabled is false)"
            )
        return f"{added} since this hermes started: it connects {_NEXT_START}"
    return None


def _enabled_since(record: PluginRecord, config_path: Path, env: Environment) -> bool:
    """Whether ``config_path`` enables the plugin of ``record`` now, which was not enabled when
    the host read it: a long-running host (``hermes serve``) reads its configuration once, and
    ``hermes plugins enable`` afterwards must not be answered with that same command."""
    if record.status not in ("not enabled", "disabled"):
        return False
    config = _file_now(config_path, env)
    if config is None:
        return False
    plugins = config.plugins
    disabled = {normalize_name(name) for name in plugins.disabled}
    enabled = {normalize_name(name) for name in plugins.enabled}
    return record.name in enabled - disabled


def _file_now(config_path: Path, env: Environment) -> Config | None:
    """The configuration ``config_path`` holds now, as a host of ``env`` would read it at its
    next start; ``None`` when that start would not read it (a project's file the gate keeps
    out) or it cannot be read (its error is said at that start)."""
    if config_refusal(env, config_path, "the config file") is not None:
        return None
    from hermes_core._config import load_config

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # said when the file is read for the next start
            return load_config(config_path)
    except (HermesError, OSError):
        return None


def _shadowed_tool(
    records: list[PluginRecord], listing: list[PluginRecord], tool: str
) -> str | None:
    """``'x' is a tool of the bundled copy of plugin 'p', and the user copy (/path) shadows
    it ...``: the tool of a copy that another copy of its name, one not listing the tool, beat
    (an override replaces a plugin whole, enabled or not), and how to have it back."""
    for shadowed in listing:
        winner = next(
            (
                record
                for record in records
                if record.name == shadowed.name and record.winner and record is not shadowed
            ),
            None,
        )
        if shadowed.status != "shadowed" or winner is None:
            continue
        return (
            f"{tool!r} is a tool of the {shadowed.source} copy of plugin {shadowed.name!r}, and "
            f"the {winner.source} copy ({winner.path}) shadows it ({winner.status}) without "
            f"providing {tool!r}: to use the {shadowed.source} copy again, {_remove(winner)} "
            f"(disabling {winner.name!r} disables both copies)"
        )
    return None


def _remove(record: PluginRecord) -> str:
    """How to take the copy ``record`` away, so that the copy it shadows takes part."""
    candidate = record.candidate
    if record.source == "nix":
        return "take its store path out of HERMES_NIX_PLUGINS"
    if candidate.entry_point is not None:
        return f"uninstall its distribution, {candidate.distribution}"
    folder = candidate.directory
    return f"move {folder} out of {folder.parent}" if folder is not None else "remove it"


def remedy(record: PluginRecord | None) -> str:
    """``; fix or disable it (hermes plugins disable x)``: what the warning of a plugin that
    failed at start ends with, as an observer hook's failure does; nothing for a plugin given
    in code (``Host.register``), which its program chose."""
    if record is None or record.source == "direct":
        return ""
    return f"; fix or disable it (hermes plugins disable {record.name})"


def why_not_loaded(record: PluginRecord) -> str:
    """``plugin 'x' (project, /path) is gated: set HERMES_ENABLE_PROJECT_PLUGINS=1 ...``: which
    copy of a plugin this is, why it did not load and how to make it load."""
    return f"{_where(record)} {_state(record)}"


def _where(record: PluginRecord) -> str:
    """``plugin 'x' (project, /path)``: which copy of a plugin ``record`` is."""
    where = f"{record.source}, {record.path}" if record.path is not None else record.source
    if record.shadows:
        where += f"; it shadows the {', '.join(record.shadows)} copy"
    return f"plugin {record.name!r} ({where})"


def _state(record: PluginRecord) -> str:
    name = record.name
    if record.status == "gated":  # the gate's message says what it takes in this config
        return f"is gated: {record.message or f'set {PROJECT_GATE_FLAG}=1 in the environment'}"
    if record.status == "disabled":
        return f"is disabled ({record.message}): hermes plugins enable {name}"
    if record.status == "not enabled":
        return f"is not enabled: {record.message or f'hermes plugins enable {name}'}"
    if record.status == "error" and record.traceback is not None:
        return f"failed: {record.message} (hermes -v plugins info {name} shows the traceback)"
    if record.status == "error":
        return f"failed: {record.message}"
    return f"is {record.status}: {record.message or record.status}"
