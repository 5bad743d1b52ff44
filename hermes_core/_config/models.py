"""The sections of ``config.yaml``, each key with its type, default and rules.

Every section forbids unknown keys and checks its values (numbers within bounds, lists that are
lists), so a typo or a wrong type is caught at load time; :mod:`hermes_core._config.errors` says
it in the user's words with the file, the line and the dotted key. The machinery is
:mod:`hermes_core._config.sections`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from hermes_core._config.agent import (
    AgentConfig,
    CronConfig,
    DelegationConfig,
    MemoryConfig,
    ModelConfig,
)
from hermes_core._config.checks import NamesList, names_list
from hermes_core._config.claude_hooks import claude_entry_problem, claude_event_problems
from hermes_core._config.mcp_servers import (
    MCP_SERVER_NAME,
    MCP_SERVER_NAME_RULE,
    McpOAuthConfig,
    McpServerConfig,
    check_mcp_server_name,
)
from hermes_core._config.sections import (
    WARNINGS_CONTEXT,
    After,
    Before,
    InvalidConfig,
    Loc,
    Number,
    Problem,
    Section,
    fallback,
    key_paths,
    misplaced,
    section_keys,
    unwrap_optional,
)
from hermes_core._plugin_names import normalize_name
from hermes_core._shown import shown

DEFAULT_DEFER: tuple[str, ...] = (
    "todo_list",
    "process_manage",
    "cronjob",
    "image_generate",
    "computer_use",
    "manage_connections",
)


class ConfigWarning(UserWarning):
    """A configuration value that was accepted with a fallback (``enabled: maybe`` means ``auto``).

    ``key`` is the dotted key; ``path`` and ``line`` are set when the value came from a file.
    """

    def __init__(
        self, detail: str, *, key: str, path: Path | None = None, line: int | None = None
    ) -> None:
        self.detail = detail
        self.key = key
        self.path = path
        self.line = line
        super().__init__(where_prefix(path, line, key) + detail)


def where_prefix(path: Path | None, line: int | None, key: str | None) -> str:
    where = ""
    if path is not None:
        where = str(path) + (f":{line}" if line is not None else "") + ": "
    if key:
        where += f"{key}: "
    return where


# --------------------------------------------------------------------------------------------
# Value rules shared by the sections


def _enabled_words(value: Any) -> Any:
    if isinstance(value, bool):
        return _switch_words(value)
    if isinstance(value, str) and value.strip().lower() in {"auto", "on", "off"}:
        return value.strip().lower()
    fallback(
        ConfigWarning(
            f"unknown value {shown(value)}, using 'auto' (expected auto, on or off)",
            key="tools.tool_search.enabled",
        )
    )
    return "auto"


def _switch_words(value: Any) -> Any:
    """An auto/on/off key written as a boolean: true is ``auto``, false ``off``."""
    if isinstance(value, bool):
        return "auto" if value else "off"
    return value


def _connectors_bool(value: Any) -> Any:
    if isinstance(value, bool):
        return {"enabled": value}
    return value


def _normalized_entry_names(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Key ``entries`` by normalized plugin name, as plugins are looked up
    (``settings_demo`` is the settings of plugin ``settings-demo``)."""
    by_name: dict[str, dict[str, Any]] = {}
    spelled: dict[str, str] = {}
    for key, settings in entries.items():
        name = normalize_name(key)
        if name in spelled:
            raise ValueError(
                f"{shown(spelled[name])} and {shown(key)} are the same plugin "
                f"{shown(name)}; keep one entry"
            )
        spelled[name] = key
        by_name[name] = settings
    return by_name


def _server_names(servers: dict[str, Any]) -> dict[str, Any]:
    for name in servers:
        check_mcp_server_name(name)
    return servers


# --------------------------------------------------------------------------------------------
# The sections


class ToolSearchConfig(Section):
    """``tools.tool_search``: deferral, the catalog listing and retrieval."""

    enabled: Annotated[Literal["auto", "on", "off"], Before(_enabled_words)] = "auto"
    threshold_pct: Annotated[float, Number(low=0, high=100)] = 5.0
    listing: Annotated[Literal["auto", "on", "off"], Before(_switch_words)] = "auto"
    listing_max_tokens: Annotated[int, Number(low=200, high=60000, whole=True)] = 4000
    search_default_limit: Annotated[int, Number(whole=True)] = 5
    max_search_limit: Annotated[int, Number(low=1, high=50, whole=True)] = 25
    defer: NamesList = list(DEFAULT_DEFER)
    always_visible: NamesList = []
    backend: str = "bm25"
    admission: Literal["strict", "lenient", "off"] = "off"
    max_searches_per_turn: Annotated[int, Number(low=1, whole=True)] = 8

    def _validate(self) -> None:
        clamped = min(max(self.search_default_limit, 1), self.max_search_limit)
        if clamped != self.search_default_limit:
            object.__setattr__(self, "search_default_limit", clamped)


class ConnectorsConfig(Section):
    """``tools.connectors``: hosted connector tools through a gateway."""

    enabled: bool = True
    url: str | None = None
    gateway: str = "http"
    search_timeout: Annotated[float, Number(above=0)] = 30.0
    """Seconds ``tool_search`` waits for the gateway before answering with local results."""
    max_result_chars: Annotated[int, Number(low=1, whole=True)] = 100_000
    """The most of one connector call's result that is passed on, cut as MCP results are."""

    @property
    def configured(self) -> bool:
        """Whether connectors are enabled and a gateway URL is set (signed in or not)."""
        return self.enabled and bool(self.url)


class CatalogEntry(Section):
    """One entry of ``tools.catalogs``: a catalog file loaded as deferred tools."""

    path: str
    server: str | None = None


class ToolsConfig(Section):
    """``tools``."""

    tool_search: ToolSearchConfig = ToolSearchConfig()
    connectors: Annotated[ConnectorsConfig, Before(_connectors_bool)] = ConnectorsConfig()
    catalogs: list[CatalogEntry] = []
    enabled_toolsets: NamesList | None = None
    disabled_toolsets: NamesList = []


class PluginsConfig(Section):
    """``plugins``: which plugins load, their settings, and the hook timeout."""

    enabled: NamesList = []
    disabled: NamesList = []
    entries: Annotated[dict[str, dict[str, Any]], After(_normalized_entry_names)] = {}
    hook_timeout: Annotated[float, Number(above=0)] = 30.0


def _approval_rules(rules: list[str]) -> list[str]:
    """A tool name has no parentheses (``TOOL_NAME_PATTERN``), so a rule whose tool part holds
    one is Claude Code's syntax (``Bash(rm:*)``), which would match nothing: in ``deny``, it
    would refuse nothing."""
    for rule in rules:
        tool, _, _ = rule.partition(":")
        if "(" not in tool and ")" not in tool:
            continue
        claude = re.fullmatch(r"Bash\((.*?)(:\*)?\)", rule)
        command = "COMMAND" if claude is None else claude[1] + (" *" if claude[2] else "")
        raise ValueError(
            f"{shown(rule)} is a Claude Code rule, which matches no hermes tool: write a glob "
            f"over tool names (read_file, mcp__git__*) or, for a shell command, "
            f"'terminal:{command}' (docs/tools.md)"
        )
    return rules


ApprovalRules = Annotated[list[str], Before(names_list), After(_approval_rules)]


class ApprovalsConfig(Section):
    """``approvals``: the policy, allow and deny globs, and what happens when nobody can answer."""

    policy: str = "annotations"
    allow: ApprovalRules = []
    deny: ApprovalRules = []
    non_interactive: Literal["deny", "allow"] = "deny"
    timeout: Annotated[float, Number(above=0)] = 300.0


class CodeExecutionConfig(Section):
    """``code_execution``: the ``execute_code`` tool's settings, deprecated: they moved to
    ``plugins.entries.code_execution`` (the plugin's typed settings). The section is still
    checked and read for one release; loading a config.yaml that has it warns."""

    mode: Literal["project", "strict"] = "project"
    timeout: Annotated[float, Number(above=0)] = 300.0
    max_tool_calls: Annotated[int, Number(low=0, whole=True)] = 50
    max_captured_bytes: Annotated[int, Number(low=1, whole=True)] = 10_000_000
    tools: NamesList | None = None
    env_passthrough: NamesList = []


class SkillsConfig(Section):
    """``skills``: the variables a viewed skill may let through to the session's scripts."""

    allowed_environment_variables: NamesList = []


class ShellHook(Section):
    """One shell command run on a hook event: it reads the event as JSON on stdin and may print
    a directive; ``match`` is a glob over tool names (tool events only)."""

    command: str
    match: str = "*"
    timeout: Annotated[float, Number(above=0)] = 10.0

    def _fill(self, values: Mapping[Any, Any], loc: Loc, problems: list[Problem]) -> bool:
        # An entry pasted from .claude/settings.json is one problem saying hermes's shape.
        claude = claude_entry_problem(values, loc)
        problems.extend([claude] if claude else [])
        return claude is None and super()._fill(values, loc, problems)


class HooksConfig(Section):
    """``hooks``: shell commands per event, and which hook directories are enabled
    (``disabled`` wins)."""

    pre_tool_call: list[ShellHook] = []
    post_tool_call: list[ShellHook] = []
    session_start: list[ShellHook] = []
    session_end: list[ShellHook] = []
    enabled: NamesList = []
    disabled: NamesList = []

    def _fill(self, values: Mapping[Any, Any], loc: Loc, problems: list[Problem]) -> bool:
        before = len(problems)
        done = super()._fill(values, loc, problems)
        events = [name for name in section_keys(HooksConfig) if name not in ("enabled", "disabled")]
        problems[before:] = claude_event_problems(problems[before:], loc, events)
        return done


MOVED_SECTIONS: dict[str, str] = {"code_execution": "plugins.entries.code_execution"}
"""Top-level sections that moved to a plugin's settings, each with where it is read now: still
read for one release, with a :class:`ConfigWarning` saying where to move it."""


class Config(Section):
    """The whole ``config.yaml``. Every section is optional."""

    tools: ToolsConfig = ToolsConfig()
    plugins: PluginsConfig = PluginsConfig()
    mcp_servers: Annotated[dict[str, McpServerConfig], After(_server_names)] = {}
    approvals: ApprovalsConfig = ApprovalsConfig()
    code_execution: CodeExecutionConfig = CodeExecutionConfig()
    hooks: HooksConfig = HooksConfig()
    skills: SkillsConfig = SkillsConfig()
    model: ModelConfig = ModelConfig()
    agent: AgentConfig = AgentConfig()
    delegation: DelegationConfig = DelegationConfig()
    cron: CronConfig = CronConfig()
    memory: MemoryConfig = MemoryConfig()

    def _fill(self, values: Mapping[Any, Any], loc: Loc, problems: list[Problem]) -> bool:
        # A known key one level off (``non_interactive`` at the top) names where it belongs:
        # the section it landed in cannot, since only the whole file knows every key.
        before = len(problems)
        done = super()._fill(values, loc, problems)
        if len(problems) > before:
            paths = [p for p in key_paths(Config) if p[0] not in MOVED_SECTIONS]
            problems[before:] = [misplaced(problem, paths) for problem in problems[before:]]
        return done


__all__ = [
    "DEFAULT_DEFER",
    "MCP_SERVER_NAME",
    "MCP_SERVER_NAME_RULE",
    "MOVED_SECTIONS",
    "WARNINGS_CONTEXT",
    "AgentConfig",
    "ApprovalsConfig",
    "CatalogEntry",
    "CodeExecutionConfig",
    "Config",
    "ConfigWarning",
    "ConnectorsConfig",
    "CronConfig",
    "DelegationConfig",
    "HooksConfig",
    "InvalidConfig",
    "McpOAuthConfig",
    "McpServerConfig",
    "MemoryConfig",
    "ModelConfig",
    "NamesList",
    "PluginsConfig",
    "ShellHook",
    "SkillsConfig",
    "ToolSearchConfig",
    "ToolsConfig",
    "check_mcp_server_name",
    "unwrap_optional",
    "where_prefix",
]
