"""The registry: every tool the host can call, by name, with owners, precedence, blocks and
change listeners; :class:`EnabledTools`, the registry as tool search sees it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from hermes_core._broken_schema import start_problem
from hermes_core._errors import RegistrationError
from hermes_core._generation_cache import GenerationCache
from hermes_core._tool_blocks import BlockRun, ToolBlock, ToolSequence
from hermes_core._tools import (
    BRIDGE_TOOL_NAMES,
    Tool,
    check_tool_name,
    tool_definition_problem,
    toolsets_config_allows,
)

if TYPE_CHECKING:
    from hermes_core._config import ToolsConfig

log = logging.getLogger(__name__)


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
    name twice is a :class:`~hermes_core._errors.RegistrationError` naming both owners, unless the
    precedences differ: then the higher one wins and the other is kept in :attr:`shadowed`.
    ``generation`` grows on every change, so caches
    (:class:`~hermes_core._generation_cache.GenerationCache`) can tell whether they are stale, and
    :meth:`subscribe` tells whoever must act on a change (``hermes serve`` telling its clients)
    once per change: once for :meth:`register_all`, :meth:`unregister_owner` or a
    :meth:`batch` as a whole.

    A :class:`~hermes_core._tool_blocks.ToolBlock` (:meth:`register_block`) is registered whole:
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
                f"{owner or 'unknown owner'}: expected a hermes_core._tools.Tool, got "
                f"{type(tool).__name__}"
            )
        who = owner or tool.source_name or tool.source
        try:
            check_tool_name(tool.name)
        except ValueError as exc:
            raise RegistrationError(f"{who}: {exc}") from None
        if tool.name in BRIDGE_TOOL_NAMES and not bridge:
            raise RegistrationError(
                f"{who}: the tool name {tool.name!r} is reserved for the tool search bridge "
                f"({', '.join(sorted(BRIDGE_TOOL_NAMES))}): give the tool another name"
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
        if tool.core:  # its schema goes in every model request: a broken one is said now
            broken = start_problem(tool)
            if broken is not None:
                log.warning("%s", broken.warning(tool))
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
        list, or with blocks registered a :class:`~hermes_core._tool_blocks.ToolSequence` that
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
        :class:`~hermes_core._tool_blocks.ToolSequence` that holds them whole."""
        if not self._blocks:
            return list(cast("dict[str, Tool]", self._tools).values())
        return self._sequence(lambda _: True)

    def overridden(self) -> dict[str, ShadowedTool]:
        """By name, for each registered tool that beat another registration of its name (a
        plugin of a higher source overriding a bundled tool), the registration it beat last."""
        found: dict[str, ShadowedTool] = {}
        for lost in self.shadowed:
            current = self._owner_of(lost.tool.name)
            if current is not None and current[0] == lost.shadowed_by:
                found[lost.tool.name] = lost
        return found

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
