"""Tools and their results: the model every source (built-in, plugin, MCP, connectors, catalog)
shares."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast

from hermes_core.errors import RegistrationError
from hermes_core.generation_cache import GenerationCache
from hermes_core.tool_blocks import BlockRun, ToolBlock, ToolSequence

if TYPE_CHECKING:
    from hermes_core.config import ToolsConfig

log = logging.getLogger(__name__)

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
            "hermes_core.tools.ToolAnnotations"
        )
    if type(fields.meta) not in _PLAIN_MAPPINGS and not isinstance(fields.meta, Mapping):
        return f"has meta of type {type(fields.meta).__name__}; give a mapping"
    return None


@dataclass(frozen=True)
class ShadowedTool:
    """A registration that lost to another one of higher precedence."""

    tool: Tool
    owner: str
    shadowed_by: str


class Registry:
    """Every tool the host can call, by name.

    Each registration has an ``owner`` (the plugin, MCP server or subsystem) and a
    ``precedence`` (the plugin source rank: bundled < user < project < pip < nix). Registering a
    name twice is a :class:`~hermes_core.errors.RegistrationError` naming both owners, unless the
    precedences differ: then the higher one wins and the other is kept in :attr:`shadowed`.
    ``generation`` grows on every change, so caches
    (:class:`~hermes_core.generation_cache.GenerationCache`) can tell whether they are stale, and
    :meth:`subscribe` tells whoever must act on a change (``hermes serve`` telling its clients)
    once per change: once for :meth:`register_all`, :meth:`unregister_owner` or a
    :meth:`batch` as a whole.

    A :class:`~hermes_core.tool_blocks.ToolBlock` (:meth:`register_block`) is registered whole:
    its tools are made when they are asked for, and :meth:`enabled` hands it on whole. As soon
    as one of its names is replaced, shadowed or removed, every tool of the block is made and
    registered as an ordinary tool, so each rule above applies to it unchanged.
    """

    def __init__(self) -> None:
        # A block holds one entry, keyed by the block itself (no name can find it), at its
        # place in registration order; its names are the block's own (ToolBlock.position).
        self._tools: dict[str | ToolBlock, Tool | ToolBlock] = {}
        self._owners: dict[str, tuple[str, int]] = {}
        self._blocks: dict[ToolBlock, tuple[str, int]] = {}
        self.shadowed: list[ShadowedTool] = []
        self.generation = 0
        self._listeners: list[Callable[[], None]] = []
        self._batching = False

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after every change of the registered tools, on the thread that
        made it; returns the function that unsubscribes it. A listener that raises is logged
        and does not stop the change or the other listeners."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _changed(self) -> None:
        self.generation += 1
        if not self._batching:
            self._announce()

    def _announce(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                log.exception("a registry listener failed")

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Make several changes that listeners hear of once, at the end (if there were any)."""
        if self._batching:
            yield
            return
        before = self.generation
        self._batching = True
        try:
            yield
        finally:
            self._batching = False
            if self.generation != before:
                self._announce()

    def register(
        self,
        tool: Tool,
        *,
        owner: str | None = None,
        precedence: int = 0,
        bridge: bool = False,
    ) -> bool:
        """Add ``tool``; return whether it is now the registered tool of its name.

        ``bridge=True`` is how the tool search layer claims the reserved bridge names.
        """
        if not isinstance(tool, Tool):
            raise RegistrationError(
                f"{owner or 'unknown owner'}: expected a hermes_core.tools.Tool, got "
                f"{type(tool).__name__}"
            )
        who = owner or tool.source_name or tool.source
        try:
            check_tool_name(tool.name)
        except ValueError as exc:
            raise RegistrationError(f"{who}: {exc}") from None
        if tool.name in BRIDGE_TOOL_NAMES and not bridge:
            raise RegistrationError(
                f"{who}: the tool name {tool.name!r} is reserved for the tool search bridge"
            )
        problem = tool_definition_problem(tool)
        if problem is not None:
            raise RegistrationError(f"{who}: the tool {tool.name!r} {problem}")
        existing = self._owner_of(tool.name)
        if existing is not None:
            other, other_rank = existing
            if other_rank == precedence:
                raise RegistrationError(
                    f"tool {tool.name!r} is registered by both {other!r} and {who!r}; "
                    "disable one of them or rename the tool"
                )
            if other_rank > precedence:
                self.shadowed.append(ShadowedTool(tool, who, other))
                return False
            self._unblock(tool.name)
            shadowed = self._tools[tool.name]
            assert not isinstance(shadowed, ToolBlock)
            self.shadowed.append(ShadowedTool(shadowed, other, who))
        self._tools[tool.name] = tool
        self._owners[tool.name] = (who, precedence)
        self._changed()
        return True

    def register_block(self, block: ToolBlock, *, owner: str, precedence: int = 0) -> bool:
        """Register the tools of ``block`` (already checked: valid names, none reserved) as one
        change; their :class:`Tool` objects are made when asked for. Returns ``True``; when a
        name of the block is registered already, the block's tools are made and registered
        with :meth:`register_all` instead (its rules and errors), and ``False`` returned."""
        names = block.names
        taken = not self._owners.keys().isdisjoint(names) or not BRIDGE_TOOL_NAMES.isdisjoint(names)
        if taken or any(
            not other.name_positions().keys().isdisjoint(names) for other in self._blocks
        ):
            self.register_all(list(BlockRun(block)), owner=owner, precedence=precedence)
            return False
        self._tools[block] = block
        self._blocks[block] = (owner, precedence)
        self._changed()
        return True

    def _block_of(self, name: str) -> ToolBlock | None:
        """The registered block that holds ``name``, if any."""
        for block in self._blocks:
            if block.position(name) is not None:
                return block
        return None

    def _owner_of(self, name: str) -> tuple[str, int] | None:
        found = self._owners.get(name)
        if found is None and self._blocks:
            block = self._block_of(name)
            if block is not None:
                found = self._blocks[block]
        return found

    def _unblock(self, name: str) -> None:
        """If ``name`` belongs to a block, make the block's tools and register them in its
        place as ordinary tools (their order and owners unchanged)."""
        block = self._block_of(name) if self._blocks else None
        if block is not None:
            self._unblock_all(block)

    def _unblock_all(self, block: ToolBlock) -> None:
        owner = self._blocks.pop(block)
        tools: dict[str | ToolBlock, Tool | ToolBlock] = {}
        for entry, value in self._tools.items():
            if entry is block:
                tools.update(zip(block.names, BlockRun(block), strict=True))
            else:
                tools[entry] = value
        self._tools = tools
        self._owners.update(dict.fromkeys(block.names, owner))

    def register_all(self, tools: Iterable[Tool], *, owner: str, precedence: int = 0) -> list[Tool]:
        """Register several tools of one owner; nothing is registered if one of them is refused.

        Tools without a ``source_name`` get ``owner`` as theirs. Returns the tools that won.
        """
        prepared = [
            tool
            if not isinstance(tool, Tool) or tool.source_name
            else replace(tool, source_name=owner)
            for tool in tools
        ]
        snapshot = (
            dict(self._tools),
            dict(self._owners),
            dict(self._blocks),
            list(self.shadowed),
            self.generation,
        )
        won: list[Tool] = []
        with self.batch():
            try:
                for tool in prepared:
                    if self.register(tool, owner=owner, precedence=precedence):
                        won.append(tool)
            except RegistrationError:
                self._tools, self._owners, self._blocks, self.shadowed, self.generation = snapshot
                raise
        return won

    def unregister(self, name: str) -> Tool:
        """Remove the tool called ``name`` and return it (``KeyError`` if there is none)."""
        self._unblock(name)
        tool = self._tools.pop(name)
        assert not isinstance(tool, ToolBlock)
        del self._owners[name]
        self._changed()
        return tool

    def unregister_owner(self, owner: str) -> list[Tool]:
        """Remove every tool of ``owner`` (a disconnected MCP server, an unloaded plugin)."""
        for block, (who, _) in list(self._blocks.items()):
            if who == owner:
                self._unblock_all(block)
        names = [name for name, (who, _) in self._owners.items() if who == owner]
        with self.batch():
            return [self.unregister(name) for name in names]

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        found = self._tools.get(name)
        if found is None:
            for block in self._blocks:
                position = block.position(name)
                if position is not None:
                    return block.tool(position)
        # A name never finds a block: blocks are keyed by themselves.
        return cast("Tool | None", found)

    def enabled(self, tools_config: ToolsConfig) -> Sequence[Tool]:
        """The tools whose toolset ``tools.enabled_toolsets``/``disabled_toolsets`` allow: a
        list, or with blocks registered a :class:`~hermes_core.tool_blocks.ToolSequence` that
        holds them whole."""
        if not self._blocks:
            plain = cast("dict[str, Tool]", self._tools)  # no block: only tools
            return [t for t in plain.values() if toolsets_config_allows(t.toolset, tools_config)]
        return self._sequence(lambda toolset: toolsets_config_allows(toolset, tools_config))

    def _sequence(self, allows: Callable[[str], bool]) -> ToolSequence:
        runs: list[tuple[Tool, ...] | BlockRun] = []
        plain: list[Tool] = []
        values = iter(self._tools.values())
        for value in values:
            if isinstance(value, ToolBlock):
                if plain:
                    runs.append(tuple(plain))
                    plain = []
                runs.append(_allowed_run(value, allows))
            elif allows(value.toolset):
                plain.append(value)
        if plain:
            runs.append(tuple(plain))
        return ToolSequence(runs)

    def tools(self) -> Sequence[Tool]:
        """Every registered tool, in registration order: a list, or with blocks registered a
        :class:`~hermes_core.tool_blocks.ToolSequence` that holds them whole."""
        if not self._blocks:
            return list(cast("dict[str, Tool]", self._tools).values())
        return self._sequence(lambda _: True)

    def names(self) -> list[str]:
        """Every registered name, in registration order (no tool is made)."""
        names: list[str] = []
        for entry in self._tools:
            if isinstance(entry, ToolBlock):
                names += entry.names
            else:
                names.append(entry)
        return names

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in self._tools or (bool(self._blocks) and self._block_of(name) is not None)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self.tools()))

    def __len__(self) -> int:
        return len(self._owners) + sum(map(len, self._blocks))

    @property
    def blocks(self) -> tuple[ToolBlock, ...]:
        """The blocks registered whole (see :meth:`register_block`), in registration order."""
        return tuple(self._blocks)


def _allowed_run(block: ToolBlock, allows: Callable[[str], bool]) -> BlockRun:
    """The run of ``block``'s tools whose group's toolset ``allows`` accepts."""
    allowed = [allows(toolset) for toolset in block.toolsets]
    if all(allowed):
        return BlockRun(block)
    return BlockRun(
        block, tuple(position for position, group in enumerate(block.group_ids) if allowed[group])
    )


class EnabledTools:
    """The registry as tool search sees it: only tools whose toolset the configuration enables
    (``tools.enabled_toolsets`` / ``disabled_toolsets``), in registration order."""

    def __init__(self, registry: Registry, tools_config: ToolsConfig) -> None:
        self._registry = registry
        self._config = tools_config
        self._cached: GenerationCache[None, Sequence[Tool]] = GenerationCache(registry)

    @property
    def generation(self) -> int:
        """The registry's generation: it changes whenever a tool is added or removed."""
        return self._registry.generation

    def tools(self) -> Sequence[Tool]:
        """The enabled tools, recomputed only when the registry changed (see
        :meth:`Registry.enabled`)."""
        tools = self._cached.get(None)
        if tools is None:
            tools = self._cached.put(None, self._registry.enabled(self._config))
        return tools

    def get(self, name: str) -> Tool | None:
        """The enabled tool called ``name``, or ``None``."""
        tool = self._registry.get(name)
        if tool is None or not toolsets_config_allows(tool.toolset, self._config):
            return None
        return tool
