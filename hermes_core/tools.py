"""Tools and their results: the model every source (built-in, plugin, MCP, connectors, catalog)
shares."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

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


@dataclass(frozen=True)
class Tool:
    """A callable tool.

    ``parameters`` is the JSON Schema of the arguments object. ``toolset`` groups tools that are
    enabled and granted together; ``source`` and ``source_name`` say where it came from (the
    plugin name, the MCP server, the connector or the catalog). ``handler`` may be a plain
    function (run in a worker thread) or a coroutine function. ``timeout`` is in seconds.
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
