"""Registering each loaded plugin's ``hermes_tools`` in the registry, one plugin at a time, so a
failure names its plugin and the others still register (:func:`register_plugin_tools`)."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_core._errors import PluginError
from hermes_core._plugins.candidates import SOURCES
from hermes_core._plugins.registrations import Registrations, coroutine_problem, drop_plugins

if TYPE_CHECKING:
    from hermes_core._plugins.loader import PluginSet
    from hermes_core._registry import Registry
    from hermes_core._specs import PluginContext

__all__ = ["register_plugin_tools"]

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
    ``strict`` mode): none of its hooks runs after, and nothing it registered is kept."""
    failed: set[str] = set()
    # In the order the plugins were registered (source by source), which the registry keeps:
    # pluggy's own list puts trylast implementations (the bundled ones) in reverse.
    registered = {name: index for index, (name, _) in enumerate(plugins.pm.list_name_plugin())}
    impls = plugins.pm.hook.hermes_tools.get_hookimpls()
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
            registry.register_all(tools, owner=impl.plugin_name, precedence=rank)
        except Exception as exc:
            message = f"hermes_tools failed: {type(exc).__name__}: {exc}"
            if strict:
                raise PluginError(impl.plugin_name, message) from exc
            logger.warning("plugin %r: %s", impl.plugin_name, message)
            failed.add(impl.plugin_name)
            if record is not None:
                record.fail(message, traceback.format_exc(), cause=exc)
    if failed:
        drop_plugins(plugins.pm, registrations, failed)
        for name in failed:
            registry.unregister_owner(name)
