"""From discovery to registered plugins: resolve, gate, import enabled winners, register.

Only plugins the gate lets through are imported (by :mod:`hermes_core._plugins.importing`).
Plugin objects given in code (:meth:`hermes_core._host.Host.register`) join as enabled plugins of
the source ``direct``, after every discovered one. Each failure is recorded on its plugin and the
others load, unless strict mode turns it into a :class:`~hermes_core._errors.PluginError`.
"""

from __future__ import annotations

import heapq
import inspect
import traceback
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

from hermes_core import _hookspecs as hookspecs
from hermes_core._errors import PluginError
from hermes_core._plugins.candidates import SOURCES, Candidate
from hermes_core._plugins.discovery import discover
from hermes_core._plugins.explain import enabled_but_gated
from hermes_core._plugins.gate import gate
from hermes_core._plugins.importing import import_failure, import_plugin
from hermes_core._plugins.records import PluginRecord
from hermes_core._plugins.resolution import resolve
from hermes_core._project_trust import project_owns

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._paths import Environment

STRICT_FLAG = "HERMES_STRICT_PLUGINS"


@dataclass
class PluginSet:
    """Every discovered plugin copy as a record, the plugin manager holding the loaded ones,
    and the warnings found on the way (impostors, unreadable directories, unknown keys)."""

    records: list[PluginRecord]
    pm: pluggy.PluginManager
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> PluginRecord | None:
        """The record of the copy of ``name`` that takes part (not a shadowed one)."""
        for record in self.records:
            if record.name == name and record.winner:
                return record
        return None

    @property
    def loaded(self) -> list[PluginRecord]:
        """Records of the plugins registered with the plugin manager, in registration order."""
        return [r for r in self.records if r.loadable and r.plugin is not None]


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, reading a module plugin's names from its ``__dict__``.

    pluggy looks every name of a plugin up with :func:`inspect.getattr_static`, which for a
    module walks its type's MRO each time: 3 to 4 ms for the bundled plugins' few hundred names
    at each host start, against under 1 ms here. What is a hook implementation is pluggy's
    decision still: a module's function carrying the marker, or a value that is not a plain
    function (a bound method, a static or class method), goes to pluggy's own lookup.
    """

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        if isinstance(plugin, types.ModuleType):
            value = plugin.__dict__.get(name)
            if isinstance(value, types.FunctionType):
                if _IMPL_MARK not in value.__dict__:
                    return None
            elif not isinstance(value, (staticmethod, classmethod, types.MethodType)):
                return None
        return super().parse_hookimpl_opts(plugin, name)


_IMPL_MARK = hookspecs.PROJECT_NAME + "_impl"


def new_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager knowing every hook of :mod:`hermes_core._hookspecs`."""
    pm = _PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    return pm


def config_trusted_for_project(env: Environment, config_path: Path | None) -> bool:
    """Whether the config may enable project plugins: not when its file is the project's
    (:func:`~hermes_core._project_trust.project_owns`; a project cannot enable its own code,
    e.g. ``HERMES_HOME=./.hermes``). A config built in code (``config_path`` of ``None``) is
    the embedding program's own."""
    return config_path is None or not project_owns(env, config_path)


def plan_plugins(
    config: Config, env: Environment, *, config_path: Path | None = None
) -> tuple[list[PluginRecord], list[str]]:
    """Discover, resolve and gate: a record per copy with its status, importing nothing.

    Records come sorted by name; for one name the copy that takes part comes first, then the
    copies it shadows from the highest source down.
    """
    discovery = discover(env)
    resolution = resolve(discovery)
    warnings = list(resolution.warnings)
    trusted = config_trusted_for_project(env, config_path)
    records: list[PluginRecord] = []
    for name, winner in resolution.winners.items():
        status, message = gate(
            winner,
            config.plugins,
            env,
            project_enabled=discovery.project_enabled,
            config_trusted_for_project=trusted,
            config_in_code=config_path is None,
        )
        losers = resolution.shadowed.get(name, [])
        records.append(
            PluginRecord(winner, status, message, shadows=[loser.source for loser in losers])
        )
        for loser in reversed(losers):
            records.append(
                PluginRecord(
                    loser,
                    "shadowed",
                    f"shadowed by the {winner.source} plugin at {winner.path}",
                    shadowed_by=winner.source,
                    winner=False,
                )
            )
    for candidate in resolution.gated:
        status, message = gate(
            candidate,
            config.plugins,
            env,
            project_enabled=False,
            config_trusted_for_project=trusted,
            config_in_code=config_path is None,
        )
        records.append(PluginRecord(candidate, status, message, winner=False))
    for record in records:
        if record.status != "shadowed" and record.candidate.manifest is not None:
            warnings.extend(record.candidate.manifest.warnings)
    order = {source: index for index, source in enumerate(SOURCES)}
    records.sort(key=lambda r: (r.name, not r.winner, -order[r.source]))
    return records, warnings


def load_plugins(
    config: Config,
    env: Environment,
    *,
    config_path: Path | None = None,
    strict: bool | None = None,
    direct: Sequence[tuple[str, object]] = (),
) -> PluginSet:
    """Discover, gate, import and register every enabled plugin, then the ``direct`` ones.

    ``strict`` (default: ``HERMES_STRICT_PLUGINS``) raises the first plugin error as a
    :class:`~hermes_core._errors.PluginError` instead of recording it. ``direct`` holds
    ``(name, plugin object)`` pairs (normalized names, each once): enabled plugins of the source
    ``direct``, registered last in the order given, so their hooks run first; a discovered
    plugin of the same name is shadowed and never imported.
    """
    if strict is None:
        strict = env.flag(STRICT_FLAG)
    records, warnings = plan_plugins(config, env, config_path=config_path)
    records = _with_direct(records, direct)
    # After the direct plugins: one of them may be the copy of a name that takes part.
    warnings += enabled_but_gated(records, config.plugins.enabled)
    pm = new_plugin_manager()
    if strict:
        for record in records:
            if record.status == "error":
                raise PluginError(record.name, record.message or "error")
    _import_in_dependency_order(records, strict=strict)
    _register_in_precedence_order(
        records, pm, strict=strict, direct_order=[name for name, _ in direct]
    )
    return PluginSet(records=records, pm=pm, warnings=warnings)


def _with_direct(
    records: list[PluginRecord], direct: Sequence[tuple[str, object]]
) -> list[PluginRecord]:
    """``records`` with a record per directly given plugin; the copy of the same name that
    would have taken part becomes ``shadowed`` by it."""
    if not direct:
        return records
    added: list[PluginRecord] = []
    for name, plugin in direct:
        shadows = []
        for record in records:
            if record.name == name and record.winner:
                shadows = [record.source, *record.shadows]
                record.status = "shadowed"
                record.message = "shadowed by a plugin registered directly (Host.register)"
                record.shadowed_by = "direct"
                record.winner = False
        added.append(
            PluginRecord(Candidate("direct", name, None), "enabled", shadows=shadows, plugin=plugin)
        )
    order = {source: index for index, source in enumerate(SOURCES)}
    merged = [*records, *added]
    merged.sort(key=lambda r: (r.name, not r.winner, -order[r.source]))
    return merged


def _fail(record: PluginRecord, message: str, *, strict: bool, trace: str | None = None) -> None:
    record.fail(message, trace)
    if strict:
        raise PluginError(record.name, message)


def _import_in_dependency_order(records: list[PluginRecord], *, strict: bool) -> None:
    """Import loadable plugins, each after the plugins it requires (ties alphabetical)."""
    by_name = {r.name: r for r in records if r.winner}
    for name in _dependency_order(by_name, strict=strict):
        record = by_name[name]
        if not record.loadable or record.plugin is not None:  # a direct plugin is given
            continue
        manifest = record.candidate.manifest
        requires = manifest.requires_plugins if manifest is not None else ()
        problem = _requirement_missing(requires, by_name)
        if problem is not None:
            _fail(record, problem, strict=strict)
            continue
        try:
            record.plugin = import_plugin(record.candidate)
        except (Exception, SystemExit) as exc:
            _fail(
                record,
                import_failure(record.candidate, exc),
                strict=strict,
                trace=traceback.format_exc(),
            )


def _requirement_missing(requires: tuple[str, ...], by_name: dict[str, PluginRecord]) -> str | None:
    for required in requires:
        other = by_name.get(required)
        if other is None:
            return f"requires plugin {required!r}, which is not installed"
        if other.status == "error":
            return f"requires plugin {required!r}, which failed: {other.message}"
        if not other.loadable:
            return f"requires plugin {required!r}, which is {other.status}"
    return None


def _dependency_order(by_name: dict[str, PluginRecord], *, strict: bool) -> list[str]:
    """Kahn's algorithm over ``requires_plugins`` of loadable plugins, smallest name first;
    plugins caught in a cycle fail."""
    loadable = {name for name, record in by_name.items() if record.loadable}
    needs: dict[str, set[str]] = {}
    for name in loadable:
        manifest = by_name[name].candidate.manifest
        requires = manifest.requires_plugins if manifest is not None else ()
        needs[name] = {dep for dep in requires if dep in loadable and dep != name}
    dependents: dict[str, set[str]] = {name: set() for name in loadable}
    for name, deps in needs.items():
        for dep in deps:
            dependents[dep].add(name)
    ready = [name for name, deps in needs.items() if not deps]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = heapq.heappop(ready)
        order.append(name)
        for dependent in sorted(dependents[name]):
            needs[dependent].discard(name)
            if not needs[dependent]:
                heapq.heappush(ready, dependent)
    for name in sorted(loadable - set(order)):
        cycle = ", ".join(sorted(needs[name]))
        _fail(by_name[name], f"requires_plugins cycle: waits for {cycle}", strict=strict)
    return order


def _register_in_precedence_order(
    records: list[PluginRecord],
    pm: pluggy.PluginManager,
    *,
    strict: bool,
    direct_order: Sequence[str] = (),
) -> None:
    """Register imported plugins source by source (bundled first, direct ones last and in the
    order given), so pluggy, which calls the last registered implementation first, runs a
    higher source's hook before a lower one's."""
    order = {source: index for index, source in enumerate(SOURCES)}
    given = {name: index for index, name in enumerate(direct_order)}
    imported = [r for r in records if r.loadable and r.plugin is not None]
    for record in sorted(
        imported,
        key=lambda r: (
            order[r.source],
            given.get(r.name, 0) if r.source == "direct" else 0,
            r.name,
        ),
    ):
        try:
            pm.register(record.plugin, name=record.name)
        except pluggy.PluginValidationError as exc:
            why = _signature_problem(pm, record.plugin) or " ".join(str(exc).split())
            _fail(record, f"invalid hook: {why}", strict=strict, trace=traceback.format_exc())
            continue
        except ValueError as exc:
            _fail(record, f"cannot register: {exc}", strict=strict)
            continue
        unknown = _unknown_hooks(pm, record.plugin)
        if unknown:
            pm.unregister(name=record.name)
            _fail(
                record,
                "implements unknown hook"
                + ("s " if len(unknown) > 1 else " ")
                + ", ".join(unknown)
                + " (the hooks are listed in hermes_core._hookspecs)",
                strict=strict,
            )
            continue
        wrapping = _wrapper_hooks(pm, record.plugin)
        if wrapping:
            pm.unregister(name=record.name)
            _fail(
                record,
                f"invalid hook: {', '.join(wrapping)} is a wrapper (wrapper=True or "
                "hookwrapper=True), which hermes-core does not run: it calls each "
                "implementation itself, with its own timeout; write a plain @hookimpl",
                strict=strict,
            )
            continue
        record.hooks = sorted(caller.name for caller in pm.get_hookcallers(record.plugin) or ())
    # A plugin whose requirement failed to register cannot stay.
    by_name = {r.name: r for r in records if r.winner}
    changed = True
    while changed:
        changed = False
        for record in records:
            if not record.winner or not record.loadable or record.plugin is None:
                continue
            manifest = record.candidate.manifest
            problem = _requirement_missing(manifest.requires_plugins if manifest else (), by_name)
            if problem is not None:
                if pm.is_registered(record.plugin):
                    pm.unregister(record.plugin)
                _fail(record, problem, strict=strict)
                changed = True


def _wrapper_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    """The hooks ``plugin`` implements as pluggy wrappers. The dispatcher and the host call
    every implementation one by one (a timeout and an error each), so a wrapper would never
    run: a decision hook that was meant to block would let calls through."""
    return sorted(
        caller.name
        for caller in pm.get_hookcallers(plugin) or ()
        if any(
            impl.plugin is plugin and (impl.wrapper or impl.hookwrapper)
            for impl in caller.get_hookimpls()
        )
    )


def _signature_problem(pm: pluggy.PluginManager, plugin: object) -> str | None:
    """``hermes_tools(config, env, verbose) takes 'verbose', which the hook does not pass (...)``
    for the first hook implementation of ``plugin`` taking an argument its hook does not have
    (pluggy's own message spans three lines and names neither what the hook passes)."""
    for attribute in sorted(dir(plugin)):
        if pm.parse_hookimpl_opts(plugin, attribute) is None:
            continue
        caller = getattr(pm.hook, attribute, None)
        spec = caller.spec if caller is not None else None
        if spec is None:
            continue
        try:
            parameters = inspect.signature(getattr(plugin, attribute)).parameters.values()
        except (TypeError, ValueError):
            continue
        # As pluggy reads it: the positional arguments without a default are the ones passed.
        takes = [
            parameter.name
            for parameter in parameters
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
            and parameter.default is parameter.empty
        ]
        extra = [name for name in takes if name not in spec.argnames]
        if extra:
            passes = (
                f"{', '.join(spec.argnames)}: take any of them, and no other"
                if spec.argnames
                else "no argument: take none"
            )
            return (
                f"{attribute}({', '.join(takes)}) takes {', '.join(map(repr, extra))}, which "
                f"the hook does not pass (it passes {passes})"
            )
    return None


def _unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    unknown = []
    for caller in pm.get_hookcallers(plugin) or ():
        if caller.has_spec():
            continue
        impls = [impl for impl in caller.get_hookimpls() if impl.plugin is plugin]
        if any(not impl.optionalhook for impl in impls):
            unknown.append(caller.name)
    return sorted(unknown)
