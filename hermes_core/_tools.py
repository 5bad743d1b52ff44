"""Tools and their results: the model every source (built-in, plugin, MCP, connectors, catalog)
shares."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from hermes_core._block_lines import block_line

if TYPE_CHECKING:
    from hermes_core._config import ToolsConfig

ToolSource = Literal["builtin", "plugin", "mcp", "connectors", "catalog"]
ToolHandler = Callable[..., Any | Awaitable[Any]]
"""A handler receives the validated arguments as keyword arguments (plus ``session`` when it
declares that parameter) and returns a :class:`ToolResult`, a string, or JSON-compatible data."""


@dataclass(frozen=True)
class ToolAnnotations:
    """Behaviour hints used by approval policies (the MCP annotation set).

    ``destructive`` defaults to ``True`` as the MCP specification says a missing
    ``destructiveHint`` must be read.
    """

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = False


READ_ONLY_CALLS_META = "read_only_calls"
"""``Tool.meta`` key: ``{argument: [values]}``, the calls of a tool that does several things
which only read (``manage_connections`` with ``action: "status"``); such a call's
:func:`call_annotations` are read-only whatever the tool's are."""

HINTS_META = "hints"
"""``Tool.meta`` key of a tool whose hints someone else states (a connector gateway):
``{"by": "the connector gateway", "stated": [hint, ...], "seen": bool}``, the wire names of the
hints stated (``readOnlyHint``...; the others are MCP's defaults), and whether its description
was seen at all (when not, every hint is a default). Approval texts say which is which."""


def call_annotations(tool: Tool, arguments: Mapping[str, Any]) -> ToolAnnotations:
    """The hints of one call of ``tool``: the tool's, or read-only, non-destructive and
    idempotent when ``arguments`` are among its :data:`READ_ONLY_CALLS_META`."""
    hints = tool.annotations
    if hints.read_only or READ_ONLY_CALLS_META not in tool.meta:  # every call, so cheap first
        return hints
    reads = tool.meta[READ_ONLY_CALLS_META]
    if not isinstance(reads, Mapping) or not reads:
        return hints
    for argument, values in reads.items():
        if argument not in arguments or arguments[argument] not in values:
            return hints
    return replace(hints, read_only=True, destructive=False, idempotent=True)


@dataclass(frozen=True, slots=True)
class Tool:
    """A callable tool.

    ``parameters`` is the JSON Schema of the arguments object. ``toolset`` groups tools that are
    enabled and granted together; ``source`` and ``source_name`` say where it came from (the
    plugin name, the MCP server, the connector or the catalog). ``handler`` may be a plain
    function (run in a worker thread) or a coroutine function. ``timeout`` is in seconds.
    Slotted: a host may hold hundreds of thousands of tools (catalogs).
    """

    name: str
    description: str
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    handler: ToolHandler | None = None
    toolset: str = "default"
    source: ToolSource = "plugin"
    source_name: str = ""
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    timeout: float = 60.0
    core: bool = False
    """A core tool belongs to the built-in working set and stays visible unless deferred."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Source-specific data, e.g. the original MCP tool name."""


@dataclass
class ToolResult:
    """What a tool call returns to the model.

    ``content`` holds MCP-style content blocks (``{"type": "text", "text": ...}``);
    ``structured`` holds structured content when the tool gave one. An error result has
    ``is_error`` set, an ``error_code`` (``BLOCKED``, ``DENIED``, ``TIMEOUT``,
    ``INVALID_ARGUMENTS``, ``TOOL_ERROR``...) and an ``error_message``.
    """

    content: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    error_code: str | None = None
    error_message: str | None = None

    @classmethod
    def text(cls, text: str, *, structured: Any = None) -> ToolResult:
        """A successful result holding one text block."""
        return cls(content=[{"type": "text", "text": text}], structured=structured)

    @classmethod
    def error(cls, code: str, message: str, *, structured: Any = None) -> ToolResult:
        """An error result the model can act on."""
        return cls(
            content=[{"type": "text", "text": message}],
            structured=structured,
            is_error=True,
            error_code=code,
            error_message=message,
        )

    @property
    def text_content(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(
            str(block.get("text", "")) for block in self.content if block.get("type") == "text"
        )

    @property
    def model_text(self) -> str:
        """What a model reads of the result: every block in order, text as is and each other
        block as the line :func:`~hermes_core._block_lines.block_line` gives it (a model reads
        tool results as text: an image or a resource link left out would be one it never hears
        of); with no text, the structured content as JSON first."""
        text = "\n".join(block_line(block) for block in self.content)
        if self.text_content or self.structured is None:
            return text
        structured = json.dumps(self.structured, ensure_ascii=False, default=str)
        return f"{structured}\n{text}" if text else structured


TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""The name rule every tool obeys (the common subset of what model providers accept)."""

BRIDGE_TOOL_NAMES: frozenset[str] = frozenset({"tool_search", "tool_describe", "tool_call"})
"""Names reserved for the three bridge tools; only the tool search layer registers them."""


def check_tool_name(name: object) -> str:
    """Return ``name`` if it obeys :data:`TOOL_NAME_PATTERN`, else raise ``ValueError``."""
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        raise ValueError(f"tool name {name!r} is not valid: use 1-64 letters, digits, '_' or '-'")
    return name


def toolset_enabled(
    toolset: str, enabled: Sequence[str] | None, disabled: Sequence[str] = ()
) -> bool:
    """Whether ``toolset`` is enabled: ``disabled`` wins; ``enabled=None`` means all."""
    if toolset in disabled:
        return False
    return enabled is None or toolset in enabled


def toolsets_config_allows(toolset: str, tools_config: ToolsConfig) -> bool:
    """:func:`toolset_enabled` over ``tools.enabled_toolsets`` and ``disabled_toolsets``."""
    return toolset_enabled(toolset, tools_config.enabled_toolsets, tools_config.disabled_toolsets)


_PLAIN_MAPPINGS = (dict, MappingProxyType)


def tool_definition_problem(tool: Tool) -> str | None:
    """What is wrong with ``tool``'s fields (a dataclass does not check their types), or
    ``None``: the dispatcher relies on a mapping schema, a callable handler, a positive
    number of seconds and real :class:`ToolAnnotations`."""
    fields: Any = tool  # read the fields as untyped: this is where their types are checked
    # ``type(...) is`` first on each field: the ABC checks are the slow path, and a catalog
    # registers hundreds of thousands of tools at host start.
    if type(fields.parameters) is not dict and not isinstance(fields.parameters, Mapping):
        return (
            f"has parameters of type {type(fields.parameters).__name__}; give a JSON Schema object"
        )
    if fields.handler is not None and not callable(fields.handler):
        return f"has a handler of type {type(fields.handler).__name__}, which is not callable"
    timeout = fields.timeout
    if (
        not isinstance(timeout, (int, float))
        or isinstance(timeout, bool)
        or not 0 < timeout < float("inf")
    ):
        return f"has timeout {timeout!r}; give a positive number of seconds"
    if not isinstance(fields.annotations, ToolAnnotations):
        return (
            f"has annotations of type {type(fields.annotations).__name__}; give a "
            "hermes_core._tools.ToolAnnotations"
        )
    if type(fields.meta) not in _PLAIN_MAPPINGS and not isinstance(fields.meta, Mapping):
        return f"has meta of type {type(fields.meta).__name__}; give a mapping"
    return None
