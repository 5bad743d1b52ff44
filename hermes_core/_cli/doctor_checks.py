"""The checks of ``hermes doctor`` that read files only: the configuration, the plugins, the
hooks, the skills, the home and the project gate. Each reuses what its own command calls
(``config validate``, ``plugins list``, ``hooks list``, ``skills list``), so a problem reads
the same in both; the model and MCP checks, which send requests, are in
:mod:`hermes_core._cli.doctor_probes`."""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from hermes_core._errors import HermesError

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._host import Host
    from hermes_core._paths import Environment

__all__ = [
    "OWN_GROUPS",
    "Check",
    "Status",
    "config_checks",
    "home_checks",
    "hook_checks",
    "not_checked",
    "plugin_checks",
    "project_checks",
    "skill_checks",
]

Status = Literal["ok", "warning", "error", "not checked"]

OWN_GROUPS: Final = (
    "configuration",
    "plugins",
    "model",
    "mcp",
    "hooks",
    "skills",
    "home",
    "project",
)
"""The groups of doctor's own checks, in the report's order, each with a line even when the
configuration cannot be read: the one list of them (docs/cli.md names each, a test checks;
a plugin named like one has its lines shown with its source and folder)."""


@dataclass(frozen=True)
class Check:
    """One line of the report: its ``group`` (``model``), ``name`` (``server``), ``status``,
    the one-line ``message`` (the problem and its fix, in the words its own command uses) and
    ``hint``: the command that shows more, or empty."""

    group: str
    name: str
    status: Status
    message: str
    hint: str = ""

    def to_json(self) -> dict[str, Any]:
        """The object of ``hermes doctor --json``."""
        return asdict(self)


def not_checked(group: str, name: str, why: str) -> Check:
    """A check that did not run, and why."""
    return Check(group, name, "not checked", why)


def config_checks(env: Environment) -> tuple[Config | None, list[Check]]:
    """The configuration in effect, or ``None`` when it cannot be read, and what is wrong with
    it: its errors (``PATH:LINE`` and the key, as every command says them) and warnings."""
    from hermes_core._config import config_held_back, config_in_effect, load_config

    group = "configuration"
    hint = "hermes config validate"
    config: Config | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            config = config_in_effect(env)
            if config_held_back(env) is not None:
                load_config(env.config_path)  # its keys and values are checked all the same
        except HermesError as exc:
            said = str(exc).splitlines()
            if len(said) > 1 and said[0].endswith(" problems:"):  # one line a check
                return None, [Check(group, "file", "error", line, hint) for line in said[1:]]
            return None, [Check(group, "file", "error", str(exc), hint)]
    found = [
        Check(group, "file", "warning", message, hint)
        for message in dict.fromkeys(str(item.message) for item in caught)
    ]
    where = env.config_path if env.config_path.exists() else f"{env.config_path} (absent)"
    if not found:
        found.append(Check(group, "file", "ok", f"{where}: read, no problem found"))
    return config, found


def plugin_checks(config: Config, env: Environment, host: Host, refused: list[str]) -> list[Check]:
    """The plugins ``host`` loaded: each in error (``hermes plugins list``'s note), the names
    of ``plugins.enabled``/``disabled`` no plugin has, what discovery ignored; then what the
    plugins ``refused`` of the configuration (``hermes config validate``'s errors)."""
    from hermes_core._cli.enabling import unmatched_names

    problems = host.check_plugins()
    found = [
        Check(
            "plugins",
            record.name,
            "error",
            record.error or "error",
            f"hermes plugins info {record.name}",
        )
        for record in host.plugins
        if record.winner and record.status == "error"
    ]
    unmatched = unmatched_names(
        "plugins",
        (config.plugins.enabled, config.plugins.disabled),
        (record.name for record in host.plugins),
        what="plugin",
        config_path=env.config_path,
    )
    # What the configuration selects and no plugin registers is its error, with its line.
    problems = [p for p in problems if not any(said.endswith(p) for said in refused)]
    # The hooks' warnings are the hooks checks' (hook_checks): said there, once.
    hooks = set(host.hook_warnings)
    found += [
        Check("plugins", "discovery", "warning", message, "hermes plugins list")
        for message in [*(w for w in host.warnings if w not in hooks), *problems, *unmatched]
    ]
    found += [
        Check("configuration", "plugins", "error", problem, "hermes config validate")
        for problem in refused
    ]
    if not found:
        loaded = sorted(r.name for r in host.plugins if r.winner and r.loadable)
        found.append(Check("plugins", "loaded", "ok", f"{len(loaded)} loaded: {', '.join(loaded)}"))
    return found


def hook_checks(config: Config, env: Environment) -> list[Check]:
    """Each shell hook whose command is missing, each hook directory in error, and the names
    of ``hooks.enabled``/``disabled`` no directory has (``hermes hooks list``'s words)."""
    from hermes_core._cli.enabling import unmatched_names
    from hermes_core._cli.hooks_cmd import shell_rows
    from hermes_core._hooks.directories import load_failure, load_hook_directories

    hint = "hermes hooks list"
    directories, problems = load_hook_directories(
        config, env, strict=False, config_path=env.config_path
    )
    failed = {d.name: load_failure(d) for d in directories if d.wanted and d.status == "error"}
    # Each failed directory is said by its own row below, not a second time as a warning.
    problems = [problem for problem in problems if problem not in failed.values()]
    problems += unmatched_names(
        "hooks",
        (config.hooks.enabled, config.hooks.disabled),
        (directory.name for directory in directories),
        what="hook directory",
        config_path=env.config_path,
    )
    found = [Check("hooks", "directories", "warning", problem, hint) for problem in problems]
    count = 0
    for row in shell_rows(config, env):
        count += 1
        if row["status"] != "enabled":
            status: Status = "warning" if row["status"] == "gated" else "error"
            found.append(Check("hooks", row["name"], status, row["message"], hint))
    for directory in directories:
        count += 1
        if directory.status == "error":
            message = failed.get(directory.name) or directory.message or "error"
            found.append(Check("hooks", directory.name, "error", message, hint))
    if not found:
        found.append(Check("hooks", "hooks", "ok", f"{count} hooks, none broken"))
    return found


def skill_checks(config: Config, env: Environment) -> list[Check]:
    """Each skill that does not load and why, a project's skills the gate holds back, and a
    configuration under which the model gets no skills tools (``hermes skills list``)."""
    from hermes_core._cli.skills_cmd import skills_unseen
    from hermes_core._skills import scan_skills

    hint = "hermes skills list"
    folders = scan_skills(env.skills_dir, env)
    found: list[Check] = []
    if folders and (unseen := skills_unseen(config, env)) is not None:
        message = f"{unseen}: the model gets no skills_list or skill_view"
        found.append(Check("skills", "tools", "warning", message, hint))
    for folder in folders:
        if folder.status != "loaded":
            status: Status = "error" if folder.status == "error" else "warning"
            found.append(Check("skills", folder.name, status, folder.problem or "", hint))
    if not found:
        found.append(Check("skills", "skills", "ok", f"{len(folders)} load from {env.skills_dir}"))
    return found


def home_checks(env: Environment) -> list[Check]:
    """Whether another local account could change the home or the configuration file (hermes
    refuses to read such a file: it names the commands hermes starts)."""
    from hermes_core._private_files import others_could_write

    found: list[Check] = []
    for name, path in (("permissions", env.home), ("config file", env.config_path)):
        if path.exists() and (weakness := others_could_write(path)) is not None:
            found.append(Check("home", name, "error", weakness))
    if not found:
        where = env.home if env.home.exists() else f"{env.home} (not created yet)"
        found.append(Check("home", "permissions", "ok", f"{where}: only you can change it"))
    return found


def project_checks(env: Environment, refused: list[str]) -> list[Check]:
    """Whether the configuration file is the project's and so held back by the project gate
    (docs/security.md): then nothing it enables is in effect; else which MCP servers of it the
    gate ``refused`` to start in this project (each has its line in the ``mcp`` group)."""
    from hermes_core._config import config_held_back

    held_back = config_held_back(env)
    if held_back is not None:
        message = (
            f"not in effect: {held_back}; the other checks are of the configuration without it"
        )
        return [Check("project", "config", "warning", message)]
    if refused:
        names = ", ".join(f"MCP server {name!r}" for name in sorted(refused))
        message = (
            f"the configuration is in effect; in this project ({env.cwd}) the project gate "
            f"refuses to start {names}: see the mcp lines"
        )
        return [Check("project", "config", "ok", message)]
    return [Check("project", "config", "ok", "nothing of a project's is held back")]


def code_execution_checks(config: Config, env: Environment, host: Host) -> list[Check]:
    """A warning naming the tools ``code_execution.tools`` lists that ``host`` has not (a
    script could not call them: ``execute_code`` leaves them out without a word), and where
    the list is set; nothing when ``execute_code`` is not loaded or every name is known. A
    configured MCP server's tools and connector tools are not listed before they connect:
    their names are not judged."""
    from hermes_core._connector_names import is_connector_name
    from hermes_core._plugin_names import normalize_name
    from hermes_core._plugin_settings import moved_settings
    from hermes_core._shown import did_you_mean

    if "execute_code" not in host.registry:
        return []
    names = moved_settings(config, "code_execution").get("tools")
    if not isinstance(names, list):
        return []
    servers = tuple(f"mcp__{server}__" for server in config.mcp_servers)
    unknown = [
        name
        for name in names
        if isinstance(name, str)
        and name not in host.registry
        and not name.startswith(servers)
        and not is_connector_name(name)
    ]
    if not unknown:
        return []
    entry = config.plugins.entries.get(normalize_name("code_execution"), {})
    key = "plugins.entries.code_execution.tools" if "tools" in entry else "code_execution.tools"
    known = host.registry.names()
    hints = "".join(did_you_mean(name, known) for name in unknown)
    listed = ", ".join(repr(name) for name in unknown)
    message = (
        f"{key} in {env.config_path} names {listed}, which no loaded plugin provides: a script "
        f"cannot call {'it' if len(unknown) == 1 else 'them'}; correct or remove "
        f"{'it' if len(unknown) == 1 else 'them'}.{hints}"
    )
    return [Check("plugins", "code_execution.tools", "warning", message, "hermes tools list")]
