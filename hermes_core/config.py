"""The models of ``config.yaml``, how it is loaded, and how it is edited.

Every section validates, so a typo or a wrong type is caught at load time with the file, the line
and the dotted key. Edits go through :class:`ConfigDocument`, a round-trip view that keeps the
user's comments, key order and indentation, and are written atomically (temporary file, fsync,
rename) after the edited document validated.
"""

from __future__ import annotations

import difflib
import io
import math
import re
import types
import typing
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from hermes_core import yaml_layout
from hermes_core.atomic_write import write_atomically
from hermes_core.errors import ConfigError, ManagedConfigError
from hermes_core.plugin_names import normalize_name
from hermes_core.shown import PROBLEM_CHARACTERS, clipped, shown
from hermes_core.yaml_layout import Loc

if TYPE_CHECKING:
    from hermes_core.paths import Environment

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
        super().__init__(_where(path, line, key) + detail)


def _where(path: Path | None, line: int | None, key: str | None) -> str:
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


_WARNINGS = "config_warnings"


def _fallback(info: ValidationInfo, warning: ConfigWarning) -> None:
    """Report a value accepted with a fallback: to the loader collecting them (which adds the
    file and line), or as a Python warning when a model is built directly."""
    sink = info.context.get(_WARNINGS) if isinstance(info.context, dict) else None
    if isinstance(sink, list):
        sink.append(warning)
    else:
        warnings.warn(warning, stacklevel=4)


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
    annotation = _unwrap(field.annotation)
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
    enabled: bool = True

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
    tools: NamesList | None = None
    env_passthrough: NamesList = Field(default_factory=list)


class ShellHook(_Section):
    """One shell command run on a hook event."""

    command: str
    match: str = "*"
    timeout: Annotated[float, _number(above=0)] = 10.0


class HooksConfig(_Section):
    """``hooks``: shell commands per event, and which hook directories are enabled."""

    pre_tool_call: list[ShellHook] = Field(default_factory=list)
    post_tool_call: list[ShellHook] = Field(default_factory=list)
    session_start: list[ShellHook] = Field(default_factory=list)
    session_end: list[ShellHook] = Field(default_factory=list)
    enabled: NamesList = Field(default_factory=list)


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


# --------------------------------------------------------------------------------------------
# Validation errors in the user's words

_EXPECTED: dict[str, str] = {
    "missing": "this key is required",
    "string_type": "expected text",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
}


def _key_text(loc: Loc) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{clipped(part)}" if text else clipped(part)
    return text


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(options) == 1:
            return _unwrap(options[0])
    return annotation


def _model_at(loc: Loc) -> type[BaseModel] | None:
    """The section model found at ``loc`` (skipping list indexes and mapping keys)."""
    current: Any = Config
    for part in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None
            current = _unwrap(field.annotation)
        elif typing.get_origin(current) in (list, dict):
            current = _unwrap(typing.get_args(current)[-1])
        else:
            return None
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


def _describe(error: ErrorDetails) -> str:
    """What was expected and what was found, for one pydantic error."""
    kind = error["type"]
    context = error.get("ctx") or {}
    if kind in ("value_error", "assertion_error") and "error" in context:
        return str(context["error"])
    got = shown(error.get("input"))
    if kind == "extra_forbidden":
        section = _model_at(error["loc"][:-1])
        known = sorted(section.model_fields) if section is not None else []
        unknown = str(error["loc"][-1])
        hint = difflib.get_close_matches(unknown, known, n=1) if len(unknown) < 100 else []
        text = "unknown key"
        if hint:
            text += f", did you mean {hint[0]!r}?"
        if known:
            text += f" (known keys: {', '.join(known)})"
        return text
    if kind == "literal_error":
        return f"expected one of {context.get('expected', '?')}, got {got}"
    if kind == "missing":
        return _EXPECTED[kind]
    if kind in _EXPECTED:
        return f"{_EXPECTED[kind]}, got {got}"
    return f"{error['msg']}, got {got}"


_LISTED_PROBLEMS = 20
"""How many problems of one file an error lists; the count says how many there are."""


def _validation_error(exc: ValidationError, document: Any, path: Path | None) -> ConfigError:
    problems = [
        (yaml_layout.line_of(document, error["loc"]), _key_text(error["loc"]), _describe(error))
        for error in exc.errors()
    ]
    problems.sort(key=lambda problem: problem[0] if problem[0] is not None else 1 << 30)
    line, key, detail = problems[0]
    if len(problems) == 1:
        return ConfigError(detail, path=path, line=line, key=key)
    listed = [_where(path, *problem[:2]) + problem[2] for problem in problems[:_LISTED_PROBLEMS]]
    if len(problems) > _LISTED_PROBLEMS:
        listed.append(f"... and {len(problems) - _LISTED_PROBLEMS} more")
    listing = "\n".join(listed)
    error = ConfigError(f"{len(problems)} problems:\n{listing}", path=path)
    # The first problem stays reachable as attributes, as with a single error.
    error.line, error.key = line, key
    return error


def _validate(document: Any, path: Path | None) -> Config:
    """Validate round-trip data; errors and fallback warnings carry the file and the line."""
    fallbacks: list[ConfigWarning] = []
    try:
        config = Config.model_validate(yaml_layout.plain(document), context={_WARNINGS: fallbacks})
    except ValidationError as exc:
        raise _validation_error(exc, document, path) from None
    for warning in fallbacks:
        line = yaml_layout.line_of(document, tuple(warning.key.split(".")))
        warnings.warn(
            ConfigWarning(warning.detail, key=warning.key, path=path, line=line), stacklevel=3
        )
    return config


# --------------------------------------------------------------------------------------------
# Reading YAML


def _read_text(path: Path) -> str | None:
    """The file's text with its line endings as written, ``None`` when it does not exist.

    At most :data:`~hermes_core.yaml_limits.CONFIG_MAX_BYTES` are read: a larger file, or
    anything but a regular file (a FIFO), is a ``ConfigError`` and is not read.
    """
    from hermes_core.yaml_limits import CONFIG_MAX_BYTES, YamlFileError, read_limited

    try:
        return read_limited(path, CONFIG_MAX_BYTES)
    except YamlFileError as exc:
        raise ConfigError(str(exc), path=path) from None


def _parse(text: str, path: Path) -> Any:
    """Round-trip parse the text of a config file to a mapping (empty file -> empty mapping),
    within the limits of :mod:`hermes_core.yaml_limits` (no aliases, bounded nesting and
    numbers)."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from hermes_core.yaml_limits import YamlLimitError, limited, load_limited

    try:
        data = load_limited(limited(yaml_layout.round_trip_yaml()), text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = clipped(exc.problem or exc.context or "cannot be parsed", PROBLEM_CHARACTERS)
        start = exc.context_mark
        if exc.problem and exc.context and start is not None and start.line + 1 != line:
            problem += f" ({exc.context} started at line {start.line + 1})"
        key = yaml_layout.key_near_line(text, line) if line is not None else None
        key = clipped(key) if key is not None else None
        what = "" if isinstance(exc, YamlLimitError) else "invalid YAML: "
        raise ConfigError(f"{what}{problem}", path=path, line=line, key=key) from None
    except YAMLError as exc:
        raise ConfigError(
            f"invalid YAML: {clipped(str(exc), PROBLEM_CHARACTERS)}", path=path
        ) from None
    if data is None:
        return CommentedMap()
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping of sections (tools:, plugins:...) at the top, got {shown(data)}",
            path=path,
            line=1,
        )
    return data


def load_config(path: Path) -> Config:
    """Load and validate ``path``; a missing or empty file is the default configuration.

    Raises :class:`~hermes_core.errors.ConfigError` naming the file, the line and the dotted key,
    with every problem of the file (one per line) when there are several. A value accepted with a
    fallback issues a :class:`ConfigWarning` naming the file, the line and the key.
    """
    text = _read_text(path)
    if text is None:
        return Config()
    return _validate(_parse(text, path), path)


# --------------------------------------------------------------------------------------------
# Editing and saving


class ConfigDocument:
    """A round-trip (ruamel.yaml) view of config.yaml for edits that keep comments and order.

    Keys are dotted (``tools.tool_search.threshold_pct``). Values are stored as given: nothing
    is parsed here (the ``hermes config set`` command parses its text argument as YAML).
    """

    def __init__(self, path: Path, data: Any, *, text: str = "") -> None:
        self.path = path
        self._data = data
        self._newline = "\r\n" if "\r\n" in text else "\n"
        text = text.replace("\r\n", "\n")
        self._indent = yaml_layout.guess_indent(text)
        # What ruamel drops on loading, written back before the document.
        self._preamble = yaml_layout.preamble(text)
        self.changed = False

    @classmethod
    def load(cls, path: Path) -> ConfigDocument:
        """Read ``path``; a missing file is an empty document. Bad YAML raises ``ConfigError``."""
        text = _read_text(path) or ""
        # ruamel keeps the carriage returns in comments; the dump writes them back (dumps).
        return cls(path, _parse(text.replace("\r\n", "\n"), path), text=text)

    def _parts(self, key: str) -> list[str]:
        parts = key.split(".")
        if not key or any(not part for part in parts):
            raise ConfigError(f"not a dotted key: {shown(key)}", path=self.path)
        return parts

    def _find(self, key: str) -> tuple[Any, str]:
        """The mapping that holds the last part of ``key`` and that part; ``None`` for the
        mapping when anything on the way is absent or not a mapping (nothing is there)."""
        *path, last = self._parts(key)
        node = self._data
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        return (node if isinstance(node, dict) else None), last

    def _walk(self, key: str) -> tuple[Any, str]:
        """The mapping that holds the last part of ``key`` and that part; ``None`` for the
        mapping when one on the way is absent. A non-mapping on the way is a ``ConfigError``:
        a value cannot be put there."""
        parts = self._parts(key)
        node = self._data
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                return None, parts[-1]
            if not isinstance(child, dict):
                where = ".".join(parts[: depth + 1])
                raise ConfigError(
                    f"cannot set {key}: {where} holds {shown(child)}, not a mapping",
                    path=self.path,
                    line=yaml_layout.line_of(self._data, tuple(parts[: depth + 1])),
                    key=where,
                )
            node = child
        return node, parts[-1]

    def _place(self, key: str, value: Any) -> None:
        """Set ``key``, inserting the missing mappings on the way as one new entry."""
        parts = key.split(".")
        holder: Any = None
        node = self._data
        for depth, part in enumerate(parts[:-1]):
            if node.get(part) is None:
                for inner in reversed(parts[depth + 1 :]):
                    value = {inner: value}
                parts = parts[: depth + 1]
                break
            holder, node = node, node[part]
        if node or holder is None:
            yaml_layout.insert(node, parts[-1], value)
            return
        # An empty mapping ({}) becomes a block: the lines after it move below its new entry.
        holder_key = parts[-2]
        carry = yaml_layout.take_trailing(holder, holder_key)
        yaml_layout.insert(node, parts[-1], value)
        yaml_layout.give_trailing(holder, holder_key, carry)

    def get(self, key: str) -> Any:
        """The value at a dotted key as plain Python data, ``None`` when absent (also when a
        key on the way holds a scalar: ``tools.connectors.url`` with ``connectors: false``)."""
        parent, last = self._find(key)
        if parent is None:
            return None
        return yaml_layout.plain(parent.get(last))

    def set(self, key: str, value: Any) -> None:
        """Set a dotted key, creating the mappings on the way. An existing key keeps its place
        and its comments; a new key goes at the end of its section, before the blank lines and
        comments that followed the section."""
        self._walk(key)
        self._place(key, value)
        self.changed = True

    def _list_at(self, key: str, *, create: bool) -> tuple[Any, str, list[Any] | None]:
        """The mapping holding ``key``, its last part, and the list there (``None`` if absent).
        A value that is not a list is a ``ConfigError``; so is a scalar on the way when the list
        is to be created."""
        parent, last = self._walk(key) if create else self._find(key)
        current = None if parent is None else parent.get(last)
        if current is None:
            return parent, last, None
        if not isinstance(current, list):
            raise ConfigError(
                f"expected a list, got {shown(current)}",
                path=self.path,
                line=yaml_layout.line_of(self._data, tuple(key.split("."))),
                key=key,
            )
        return parent, last, current

    def add_to_list(self, key: str, value: str) -> bool:
        """Append ``value`` to the list at ``key`` (created if absent) unless it is already
        there. True when the document changed."""
        parent, last, items = self._list_at(key, create=True)
        if items is None:
            self._place(key, [value])
            self.changed = True
            return True
        if value in items:
            return False
        # Through the parent: an empty list ([]) becomes a block, and the lines after it move.
        carry = yaml_layout.take_trailing(parent, last)
        items.append(value)
        yaml_layout.give_trailing(parent, last, carry)
        self.changed = True
        return True

    def remove_from_list(self, key: str, value: str) -> bool:
        """Remove every ``value`` from the list at ``key``. True when the document changed."""
        parent, last, items = self._list_at(key, create=False)
        if items is None or value not in items:
            return False
        for index in reversed([i for i, item in enumerate(items) if item == value]):
            # del (in remove, not list.remove) so that ruamel shifts the comments of later items.
            left = yaml_layout.remove(items, index)
            if not items:
                yaml_layout.renew_empty(parent, last)
                yaml_layout.give_trailing(parent, last, left)
        self.changed = True
        return True

    def delete(self, key: str) -> bool:
        """Remove a dotted key. True when it was there."""
        parent, last = self._find(key)
        if parent is None or last not in parent:
            return False
        left = yaml_layout.remove(parent, last)
        if parent is self._data and not parent:
            # An empty document is written as its comments alone, so they all become text.
            self._preamble = _joined(self._preamble, yaml_layout.take_all_comments(parent, left))
        elif not parent:
            holder, holder_key = self._find(key.rpartition(".")[0])
            yaml_layout.renew_empty(holder, holder_key)
            yaml_layout.give_trailing(holder, holder_key, left)
        self.changed = True
        return True

    def validate(self) -> Config:
        """The edited document as a :class:`Config`; ``ConfigError`` naming line and key if not."""
        return _validate(self._data, self.path)

    def dumps(self) -> str:
        """The document as YAML text, with the file's comments, order and indentation."""
        yaml = yaml_layout.round_trip_yaml()
        mapping, sequence, offset = self._indent
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        stream = io.StringIO()
        if self._data or not self._preamble:
            marked = yaml_layout.flow_when_empty(self._data)
            try:
                yaml.dump(self._data, stream)
            finally:
                yaml_layout.block_again(marked)
        text = _joined(self._preamble, stream.getvalue())
        return text.replace("\n", self._newline) if self._newline != "\n" else text

    def save(self) -> None:
        """Validate, then write atomically: temporary file in the same directory, fsync,
        ``os.replace``; the file mode is kept and no temporary file is ever left behind."""
        self.validate()
        text = self.dumps()
        # Comment handling in ruamel has sharp edges: never write text that reads back as
        # anything but the validated document.
        try:
            same = yaml_layout.plain(_parse(text, self.path)) == yaml_layout.plain(self._data)
        except ConfigError:
            same = False
        if not same:
            raise ConfigError(
                "the edited document could not be written without changing its meaning; "
                "nothing was written (please report this with your config.yaml)",
                path=self.path,
            )
        write_atomically(self.path, text)
        self.changed = False


def _joined(head: str, tail: str) -> str:
    """Two pieces of YAML text, the first ending its last line."""
    if head and tail and not head.endswith("\n"):
        head += "\n"
    return head + tail


_MANAGED_MESSAGE = (
    "{path} is managed by Nix or an administrator (HERMES_MANAGED is set), so hermes does not "
    "edit it. Change the configuration where it is defined (your Nix module or home-manager "
    "settings), or ask your administrator."
)


@contextmanager
def edit_config(env: Environment) -> Iterator[ConfigDocument]:
    """Load env.config_path, yield the document, save on clean exit. Refuses (ManagedConfigError,
    message says the config is managed by Nix or an administrator and how to change it) when
    env.flag('HERMES_MANAGED').

    Nothing is written when the block raises, when validation fails, or when nothing changed.
    """
    if env.flag("HERMES_MANAGED"):
        raise ManagedConfigError(_MANAGED_MESSAGE.format(path=env.config_path))
    document = ConfigDocument.load(env.config_path)
    yield document
    if document.changed:
        document.save()


__all__ = [
    "DEFAULT_DEFER",
    "ApprovalsConfig",
    "CatalogEntry",
    "CodeExecutionConfig",
    "Config",
    "ConfigDocument",
    "ConfigWarning",
    "ConnectorsConfig",
    "HooksConfig",
    "McpServerConfig",
    "PluginsConfig",
    "ShellHook",
    "ToolSearchConfig",
    "ToolsConfig",
    "edit_config",
    "load_config",
]
