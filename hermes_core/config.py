"""The models of ``config.yaml``.

Every section validates, so a typo or a wrong type is caught at load time with the file, the line
and the dotted key. Loading and saving (comment-preserving, atomic) live beside the models.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hermes_core.errors import ConfigError

DEFAULT_DEFER: tuple[str, ...] = (
    "todo_list",
    "process_manage",
    "session_search",
    "cronjob_manage",
    "image_generate",
    "computer_use",
)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def _reject_scalar_list(value: Any, what: str) -> Any:
    if isinstance(value, str | int | float | bool):
        raise ValueError(f"{what} must be a list of names, not a single value (write [{value!r}])")
    return value


class ToolSearchConfig(_Section):
    """``tools.tool_search``: deferral, the catalog listing and retrieval."""

    enabled: Literal["auto", "on", "off"] = "auto"
    threshold_pct: Annotated[float, Field(ge=0, le=100)] = 5.0
    listing: Literal["auto", "on", "off"] = "auto"
    listing_max_tokens: Annotated[int, Field(ge=200, le=60000)] = 4000
    search_default_limit: int = 5
    max_search_limit: Annotated[int, Field(ge=1, le=50)] = 25
    defer: list[str] = Field(default_factory=lambda: list(DEFAULT_DEFER))
    always_visible: list[str] = Field(default_factory=list)
    backend: str = "bm25"
    admission: Literal["strict", "lenient", "off"] = "strict"
    max_searches_per_turn: Annotated[int, Field(ge=1)] = 8

    @field_validator("enabled", mode="before")
    @classmethod
    def _enabled_words(cls, value: Any) -> Any:
        if value is True:
            return "auto"
        if value is False:
            return "off"
        if isinstance(value, str) and value.strip().lower() in {"auto", "on", "off"}:
            return value.strip().lower()
        warnings.warn(
            f"tools.tool_search.enabled: unknown value {value!r}, using 'auto'",
            UserWarning,
            stacklevel=2,
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

    @field_validator("defer", "always_visible", mode="before")
    @classmethod
    def _lists_only(cls, value: Any) -> Any:
        return _reject_scalar_list(value, "this key")

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


class CatalogEntry(_Section):
    """One entry of ``tools.catalogs``: a catalog file loaded as deferred tools."""

    path: str
    server: str | None = None


class ToolsConfig(_Section):
    """``tools``."""

    tool_search: ToolSearchConfig = Field(default_factory=ToolSearchConfig)
    connectors: ConnectorsConfig = Field(default_factory=ConnectorsConfig)
    catalogs: list[CatalogEntry] = Field(default_factory=list)
    enabled_toolsets: list[str] | None = None
    disabled_toolsets: list[str] = Field(default_factory=list)

    @field_validator("connectors", mode="before")
    @classmethod
    def _connectors_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return {"enabled": value}
        return value

    @field_validator("enabled_toolsets", "disabled_toolsets", mode="before")
    @classmethod
    def _lists_only(cls, value: Any) -> Any:
        return _reject_scalar_list(value, "this key")


class PluginsConfig(_Section):
    """``plugins``: which plugins load, their settings, and the hook timeout."""

    enabled: list[str] = Field(default_factory=list)
    disabled: list[str] = Field(default_factory=list)
    entries: dict[str, dict[str, Any]] = Field(default_factory=dict)
    hook_timeout: Annotated[float, Field(gt=0)] = 30.0

    @field_validator("enabled", "disabled", mode="before")
    @classmethod
    def _lists_only(cls, value: Any) -> Any:
        return _reject_scalar_list(value, "this key")


class McpServerConfig(_Section):
    """One entry of ``mcp_servers``: a stdio command or a streamable HTTP URL."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    timeout: Annotated[float, Field(gt=0)] = 60.0
    connect_timeout: Annotated[float, Field(gt=0)] = 30.0
    enabled: bool = True

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        return self


class ApprovalsConfig(_Section):
    """``approvals``: the policy, allow and deny globs, and what happens when nobody can answer."""

    policy: str = "annotations"
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    non_interactive: Literal["deny", "allow"] = "deny"
    timeout: Annotated[float, Field(gt=0)] = 300.0

    @field_validator("allow", "deny", mode="before")
    @classmethod
    def _lists_only(cls, value: Any) -> Any:
        return _reject_scalar_list(value, "this key")


class CodeExecutionConfig(_Section):
    """``code_execution``: the ``execute_code`` tool."""

    mode: Literal["project", "strict"] = "project"
    timeout: Annotated[float, Field(gt=0)] = 300.0
    max_tool_calls: Annotated[int, Field(ge=0)] = 50
    tools: list[str] | None = None
    env_passthrough: list[str] = Field(default_factory=list)


class ShellHook(_Section):
    """One shell command run on a hook event."""

    command: str
    match: str = "*"
    timeout: Annotated[float, Field(gt=0)] = 10.0


class HooksConfig(_Section):
    """``hooks``: shell commands per event, and which hook directories are enabled."""

    pre_tool_call: list[ShellHook] = Field(default_factory=list)
    post_tool_call: list[ShellHook] = Field(default_factory=list)
    session_start: list[ShellHook] = Field(default_factory=list)
    session_end: list[ShellHook] = Field(default_factory=list)
    enabled: list[str] = Field(default_factory=list)


class Config(_Section):
    """The whole ``config.yaml``. Every section is optional."""

    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    code_execution: CodeExecutionConfig = Field(default_factory=CodeExecutionConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)


def load_config(path: Path) -> Config:
    """Load and validate ``path``; a missing file is the default configuration.

    Raises :class:`~hermes_core.errors.ConfigError` naming the file, the line and the dotted key.
    """
    if not path.exists():
        return Config()
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        raise ConfigError(first["msg"], path=path, key=key) from None
