"""Registering each loaded plugin's ``hermes_tools`` in the registry, one plugin at a time, so a
failure names its plugin and the others still register (:func:`register_plugin_tools`); which
registered tools override another of their name (:func:`tool_overrides`)."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core._errors import PluginError, RegistrationError, raised_at
from hermes_core._plugins.candidates import SOURCES, Source
from hermes_core._plugins.explain import remedy
from hermes_core._plugins.registrations import (
    Registrations,
    clashing,
    coroutine_problem,
    drop_plugins,
)
from hermes_core._tools import Tool

if TYPE_CHECKING:
    from hermes_core._plugins.loader import PluginSet
    from hermes_core._plugins.records import PluginRecord
    from hermes_core._registry import Registry
    from hermes_core._specs import PluginContext

__all__ = ["ToolOverride", "register_plugin_tools", "tool_overrides"]

logger = logging.getLogger("hermes_core._host")


def register_plugin_tools(
    plugins: PluginSet,
    registry: Registry,
    registrations: Registrations,
    context: Callable[[str], PluginContext],
    *,
    strict: bool,
) -> None:
    """Each plugin's ``hermes_tools`` (given ``context`` of its plugin), one plugin at a time
    so a failure names it and the others still register; a higher plugin source overrides a
    tool of the same name. A plugin whose ``hermes_tools`` fails is an ``error`` (raised in
    ``strict`` mode): none of its hooks runs after, and nothing it registered is kept. A tool
    name that plugins of one source both register is neither's (:func:`_without_clashes`)."""
    failed: set[str] = set()
    # In the order the plugins were registered (source by source), which the registry keeps:
    # pluggy's own list puts trylast implementations (the bundled ones) in reverse.
    registered = {name: index for index, (name, _) in enumerate(plugins.pm.list_name_plugin())}
    impls = plugins.pm.hook.hermes_tools.get_hookimpls()
    returned: list[tuple[str, int, Any]] = []
    for impl in sorted(impls, key=lambda impl: registered.get(impl.plugin_name, 0)):
        record = plugins.get(impl.plugin_name)
        rank = SOURCES.index(record.source) if record is not None else 0
        plugin_context = context(impl.plugin_name)
        arguments: dict[str, Any] = {
            "config": plugin_context.config,
            "env": plugin_context.env,
            "context": plugin_context,
        }
        try:
            tools = impl.function(*(arguments[name] for name in impl.argnames)) or ()
            problem = coroutine_problem(tools, "hermes_tools")
            if problem is not None:
                raise TypeError(problem)
            if not isinstance(tools, list | tuple):
                raise TypeError(f"expected a list of Tool, got {type(tools).__name__}")
            returned.append((impl.plugin_name, rank, tools))
        except Exception as exc:
            _failed(plugins, impl.plugin_name, exc, strict, failed)
    for plugin_name, rank, tools in _without_clashes(plugins, returned, strict):
        try:
            registry.register_all(tools, owner=plugin_name, precedence=rank)
        except Exception as exc:
            _failed(plugins, plugin_name, exc, strict, failed)
    if failed:
        drop_plugins(plugins.pm, registrations, failed)
        for name in failed:
            registry.unregister_owner(name)


def _failed(
    plugins: PluginSet, plugin_name: str, exc: Exception, strict: bool, failed: set[str]
) -> None:
    record = plugins.get(plugin_name)
    where = raised_at(exc, record.path if record is not None else None)
    message = f"hermes_tools failed: {type(exc).__name__}: {exc}" + (
        f" (at {where})" if where else ""
    )
    if strict:
        raise PluginError(plugin_name, message) from exc
    logger.warning("plugin %r: %s%s", plugin_name, message, remedy(record))
    failed.add(plugin_name)
    if record is not None:
        record.fail(message, traceback.format_exc(), cause=exc)


def _without_clashes(
    plugins: PluginSet, returned: list[tuple[str, int, Any]], strict: bool
) -> list[tuple[str, int, list[Any]]]:
    """``returned`` (plugin, source rank, tools) without the tool names that plugins of one
    source both return: such a name is neither's, as a backend's is, and each of them is an
    ``error`` naming all of them (raised in ``strict`` mode), its other tools and hooks kept.
    Which plugin came first never decides (a folder renamed would change it)."""
    owners: dict[tuple[str, int], list[str]] = {}
    for plugin_name, rank, tools in returned:
        for name in dict.fromkeys(tool.name for tool in tools if isinstance(tool, Tool)):
            owners.setdefault((name, rank), []).append(plugin_name)
    clashes = {key: names for key, names in owners.items() if len(names) > 1}
    problems: dict[str, list[str]] = {}
    for (name, _), names in sorted(clashes.items()):
        message = f"tool {name!r} {clashing(names)}"
        if strict:
            raise RegistrationError(message)
        logger.warning("%s", message)
        for plugin_name in names:
            problems.setdefault(plugin_name, []).append(message)
    for plugin_name, messages in problems.items():
        record = plugins.get(plugin_name)
        if record is not None:
            record.fail("; ".join(messages), unload=False)
    return [
        (
            plugin_name,
            rank,
            [
                tool
                for tool in tools
                if not (isinstance(tool, Tool) and (tool.name, rank) in clashes)
            ],
        )
        for plugin_name, rank, tools in returned
    ]


@dataclass(frozen=True)
class ToolOverride:
    """A registered tool that replaced another registration of its name: ``by`` registered it,
    ``owner`` the one it replaced; each ``*_source`` is that owner's plugin source, ``None``
    for an owner that is no plugin (a catalog, an MCP server)."""

    name: str
    by: str
    by_source: Source | None
    owner: str
    owner_source: Source | None

    @property
    def replaced(self) -> str:
        """``bundled plugin 'files'``: whose tool was replaced."""
        return _owner_words(self.owner, self.owner_source)

    @property
    def replacer(self) -> str:
        """``user plugin 'myread'``: whose tool replaced it."""
        return _owner_words(self.by, self.by_source)

    @property
    def mark(self) -> str:
        """``overrides bundled 'files'``: what ``hermes tools list`` adds to the tool's source
        (which says ``plugin`` already)."""
        return f"overrides {_owner_words(self.owner, self.owner_source, noun='')}"


def _owner_words(owner: str, source: Source | None, *, noun: str = "plugin ") -> str:
    return f"{source} {noun}{owner!r}" if source is not None else repr(owner)


def tool_overrides(registry: Registry, records: Iterable[PluginRecord]) -> dict[str, ToolOverride]:
    """By tool name, every registered tool that overrides another registration of its name
    (a user plugin's ``read_file`` replacing the bundled one), with the plugins' sources."""
    sources = {record.name: record.source for record in records if record.winner}
    return {
        name: ToolOverride(
            name,
            lost.shadowed_by,
            sources.get(lost.shadowed_by),
            lost.owner,
            sources.get(lost.owner),
        )
        for name, lost in registry.overridden().items()
    }
