"""The models of ``config.yaml``: one pydantic model per section, each key validated.

Every section forbids unknown keys and checks its values (numbers within bounds, lists that are
lists), so a typo or a wrong type is caught at load time; :mod:`hermes_core.config.errors` says
it in the user's words with the file, the line and the dotted key.
"""

from __future__ import annotations

import math
import re
import types
import typing
import warnings
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from hermes_core.plugin_names import normalize_name
from hermes_core.shown import clipped, shown

DEFAULT_DEFER: tuple[str, ...] = (
    "todo_list",
    "process_manage",
    "session_search",
    "cronjob_manage",
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
# Value rules shared by the models


def _number(
    *,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    whole: bool = False,
) -> BeforeValidator:
    """A YAML number (never a boolean or text) within bounds, with a message saying which."""
    what = "a whole number" if whole else "a number"
    if low is not None and high is not None:
        what += f" between {low:g} and {high:g}"
    elif low is not None:
        what += f" of at least {low:g}"
    elif above is not None:
        what += f" greater than {above:g}"

    def check(value: Any) -> Any:
        try:
            good = (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and (not whole or float(value).is_integer())
                and (low is None or value >= low)
                and (high is None or value <= high)
                and (above is None or value > above)
            )
        except OverflowError:  # an integer too large for a float is out of every bound
            good = False
        if not good:
            raise ValueError(f"expected {what}, got {shown(value)}")
        return int(value) if whole else float(value)

    return BeforeValidator(check)


def _names_list(value: Any) -> Any:
    """Lists of names must be YAML lists: a lone scalar is almost always a forgotten ``[...]``."""
    if isinstance(value, str | int | float | bool):
        raise ValueError(
            f"expected a list of names, got {shown(value)} (write [{clipped(str(value))}])"
        )
    return value


NamesList = Annotated[list[str], BeforeValidator(_names_list)]


WARNINGS_CONTEXT = "config_warnings"
"""The validation context key under which the loader collects :class:`ConfigWarning` fallbacks."""


def _fallback(info: ValidationInfo, warning: ConfigWarning) -> None:
    """Report a value accepted with a fallback: to the loader collecting them (which adds the
    file and line), or as a Python warning when a model is built directly."""
    sink = info.context.get(WARNINGS_CONTEXT) if isinstance(info.context, dict) else None
    if isinstance(sink, list):
        sink.append(warning)
    else:
        warnings.warn(warning, stacklevel=4)


def unwrap_optional(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(options) == 1:
            return unwrap_optional(options[0])
    return annotation


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @model_validator(mode="before")
    @classmethod
    def _null_sections(cls, data: Any) -> Any:
        """A section written with everything under it commented out (``plugins:`` and then
        comments only) holds null: it means the section's defaults."""
        if not isinstance(data, dict):
            return data
        return {
            key: value
            for key, value in data.items()
            if value is not None or not _is_section_field(cls, key)
        }


def _is_section_field(model: type[BaseModel], key: Any) -> bool:
    """Whether ``model.key`` holds a section or a mapping (not a value where null means
    something, like ``enabled_toolsets: null``)."""
    field = model.model_fields.get(key) if isinstance(key, str) else None
    if field is None:
        return False
    annotation = unwrap_optional(field.annotation)
    if typing.get_origin(annotation) is dict:
        return True
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


# --------------------------------------------------------------------------------------------
# The models


class ToolSearchConfig(_Section):
    """``tools.tool_search``: deferral, the catalog listing and retrieval."""

    enabled: Literal["auto", "on", "off"] = "auto"
    threshold_pct: Annotated[float, _number(low=0, high=100)] = 5.0
    listing: Literal["auto", "on", "off"] = "auto"
    listing_max_tokens: Annotated[int, _number(low=200, high=60000, whole=True)] = 4000
    search_default_limit: Annotated[int, _number(whole=True)] = 5
    max_search_limit: Annotated[int, _number(low=1, high=50, whole=True)] = 25
    defer: NamesList = Field(default_factory=lambda: list(DEFAULT_DEFER))
    always_visible: NamesList = Field(default_factory=list)
    backend: str = "bm25"
    admission: Literal["strict", "lenient", "off"] = "off"
    max_searches_per_turn: Annotated[int, _number(low=1, whole=True)] = 8

    @field_validator("enabled", mode="before")
    @classmethod
    def _enabled_words(cls, value: Any, info: ValidationInfo) -> Any:
        if value is True:
            return "auto"
        if value is False:
            return "off"
        if isinstance(value, str) and value.strip().lower() in {"auto", "on", "off"}:
            return value.strip().lower()
        _fallback(
            info,
            ConfigWarning(
                f"unknown value {shown(value)}, using 'auto' (expected auto, on or off)",
                key="tools.tool_search.enabled",
            ),
        )
        return "auto"

    @field_validator("listing", mode="before")
    @classmethod
    def _listing_words(cls, value: Any) -> Any:
        if value is True:
            return "auto"
        if value is False:
            return "off"
        return value

    @model_validator(mode="after")
    def _clamp_default_limit(self) -> ToolSearchConfig:
        clamped = min(max(self.search_default_limit, 1), self.max_search_limit)
        if clamped != self.search_default_limit:
            object.__setattr__(self, "search_default_limit", clamped)
        return self


class ConnectorsConfig(_Section):
    """``tools.connectors``: hosted connector tools through a gateway."""

    enabled: bool = True
    url: str | None = None
    gateway: str = "http"
    search_timeout: Annotated[float, _number(above=0)] = 30.0
    """Seconds ``tool_search`` waits for the gateway before answering with local results."""


class CatalogEntry(_Section):
    """One entry of ``tools.catalogs``: a catalog file loaded as deferred tools."""

    path: str
    server: str | None = None


class ToolsConfig(_Section):
    """``tools``."""

    tool_search: ToolSearchConfig = Field(default_factory=ToolSearchConfig)
    connectors: ConnectorsConfig = Field(default_factory=ConnectorsConfig)
    catalogs: list[CatalogEntry] = Field(default_factory=list)
    enabled_toolsets: NamesList | None = None
    disabled_toolsets: NamesList = Field(default_factory=list)

    @field_validator("connectors", mode="before")
    @classmethod
    def _connectors_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return {"enabled": value}
        return value


class PluginsConfig(_Section):
    """``plugins``: which plugins load, their settings, and the hook timeout."""

    enabled: NamesList = Field(default_factory=list)
    disabled: NamesList = Field(default_factory=list)
    entries: dict[str, dict[str, Any]] = Field(default_factory=dict)
    hook_timeout: Annotated[float, _number(above=0)] = 30.0

    @field_validator("entries", mode="after")
    @classmethod
    def _normalized_entry_names(
        cls, entries: dict[str, dict[str, Any]]
    ) -> dict[str, dict[str, Any]]:
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


class McpServerConfig(_Section):
    """One entry of ``mcp_servers``: a stdio command or a streamable HTTP URL."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    include: NamesList = Field(default_factory=list)
    exclude: NamesList = Field(default_factory=list)
    timeout: Annotated[float, _number(above=0)] = 60.0
    connect_timeout: Annotated[float, _number(above=0)] = 30.0
    manifest_max_age: Annotated[float, _number(low=0)] = 86400.0
    """Seconds a tool manifest stays fresh: a read-only command does not start a server whose
    last listing is younger (docs/mcp.md, "Tool manifests")."""
    retry_interval: Annotated[float, _number(low=0)] = 300.0
    """Seconds a failed connect is believed: a read-only command does not start the server
    again before they have passed."""
    max_result_chars: Annotated[int, _number(low=1, whole=True)] = 100_000
    """The most of one call's result (its text and other content, and its structured content
    as JSON) that is passed on: a server answering megabytes would fill a model's context."""
    enabled: bool = True

    @field_validator("url", mode="after")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        # A ${VAR} reference is expanded at connect time and checked by the client then.
        if value is None or "${" in value:
            return value
        from urllib.parse import urlsplit

        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"expected an http:// or https:// URL, got {shown(value)}")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        return self


class ApprovalsConfig(_Section):
    """``approvals``: the policy, allow and deny globs, and what happens when nobody can answer."""

    policy: str = "annotations"
    allow: NamesList = Field(default_factory=list)
    deny: NamesList = Field(default_factory=list)
    non_interactive: Literal["deny", "allow"] = "deny"
    timeout: Annotated[float, _number(above=0)] = 300.0


class CodeExecutionConfig(_Section):
    """``code_execution``: the ``execute_code`` tool."""

    mode: Literal["project", "strict"] = "project"
    timeout: Annotated[float, _number(above=0)] = 300.0
    max_tool_calls: Annotated[int, _number(low=0, whole=True)] = 50
    max_captured_bytes: Annotated[int, _number(low=1, whole=True)] = 10_000_000
    tools: NamesList | None = None
    env_passthrough: NamesList = Field(default_factory=list)


class ShellHook(_Section):
    """One shell command run on a hook event: it reads the event as JSON on stdin and may print
    a directive; ``match`` is a glob over tool names (tool events only)."""

    command: str
    match: str = "*"
    timeout: Annotated[float, _number(above=0)] = 10.0


class HooksConfig(_Section):
    """``hooks``: shell commands per event, and which hook directories are enabled
    (``disabled`` wins)."""

    pre_tool_call: list[ShellHook] = Field(default_factory=list)
    post_tool_call: list[ShellHook] = Field(default_factory=list)
    session_start: list[ShellHook] = Field(default_factory=list)
    session_end: list[ShellHook] = Field(default_factory=list)
    enabled: NamesList = Field(default_factory=list)
    disabled: NamesList = Field(default_factory=list)


MCP_SERVER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*")
"""An MCP server name: letters, digits, ``-`` and single ``_``. It becomes part of tool names
(``mcp__<server>__<tool>``), so ``__``, which separates those parts, is not allowed."""
MCP_SERVER_NAME_RULE = "use letters, digits, '-' and single '_' (it becomes part of tool names)"


def check_mcp_server_name(name: str) -> str:
    """``name`` if it is a valid MCP server name, else ``ValueError`` saying the rule."""
    if not MCP_SERVER_NAME.fullmatch(name) or name.endswith("_"):
        raise ValueError(f"MCP server name {shown(name)}: {MCP_SERVER_NAME_RULE}")
    return name


class Config(_Section):
    """The whole ``config.yaml``. Every section is optional."""

    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    code_execution: CodeExecutionConfig = Field(default_factory=CodeExecutionConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)

    @field_validator("mcp_servers", mode="after")
    @classmethod
    def _server_names(cls, servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in servers:
            check_mcp_server_name(name)
        return servers


__all__ = [
    "DEFAULT_DEFER",
    "MCP_SERVER_NAME",
    "MCP_SERVER_NAME_RULE",
    "WARNINGS_CONTEXT",
    "ApprovalsConfig",
    "CatalogEntry",
    "CodeExecutionConfig",
    "Config",
    "ConfigWarning",
    "ConnectorsConfig",
    "HooksConfig",
    "McpServerConfig",
    "NamesList",
    "PluginsConfig",
    "ShellHook",
    "ToolSearchConfig",
    "ToolsConfig",
    "check_mcp_server_name",
    "unwrap_optional",
    "where_prefix",
]
