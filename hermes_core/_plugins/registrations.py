"""Typed registrations collected from plugins, and selection of a backend by its config name."""

from __future__ import annotations

import inspect
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from hermes_core._errors import PluginError, RegistrationError, UnloadedPluginError, raised_at
from hermes_core._plugins.explain import (
    may_register,
    may_register_text,
    unloaded_plugin,
    why_not_loaded,
)
from hermes_core._shown import did_you_mean, shown
from hermes_core._specs import (
    ApprovalPolicySpec,
    CliCommandSpec,
    ConnectorGatewaySpec,
    ImageProviderSpec,
    MemoryProviderSpec,
    ModelProviderSpec,
    SearchBackendSpec,
    WebSearchProviderSpec,
)

if TYPE_CHECKING:
    import pluggy

    from hermes_core._plugins.records import PluginRecord

RegistrationKind = Literal[
    "search_backend",
    "connector_gateway",
    "model_provider",
    "approval_policy",
    "cli_command",
    "web_search_provider",
    "image_provider",
    "memory_provider",
]
SpecT = TypeVar(
    "SpecT",
    SearchBackendSpec,
    ConnectorGatewaySpec,
    ModelProviderSpec,
    ApprovalPolicySpec,
    CliCommandSpec,
    WebSearchProviderSpec,
    ImageProviderSpec,
    MemoryProviderSpec,
)

_HOOKS: dict[RegistrationKind, tuple[str, type[Any], str]] = {
    "search_backend": ("hermes_search_backends", SearchBackendSpec, "tools.tool_search.backend"),
    "connector_gateway": (
        "hermes_connector_gateways",
        ConnectorGatewaySpec,
        "tools.connectors.gateway",
    ),
    "model_provider": ("hermes_model_providers", ModelProviderSpec, "model.provider"),
    "approval_policy": ("hermes_approval_policies", ApprovalPolicySpec, "approvals.policy"),
    "cli_command": ("hermes_cli_commands", CliCommandSpec, "hermes <command>"),
    "web_search_provider": (
        "hermes_web_search_providers",
        WebSearchProviderSpec,
        "plugins.entries.web.search_provider",
    ),
    "image_provider": (
        "hermes_image_providers",
        ImageProviderSpec,
        "plugins.entries.media.image_provider",
    ),
    "memory_provider": ("hermes_memory_providers", MemoryProviderSpec, "memory.provider"),
}


def config_key(kind: RegistrationKind) -> str:
    """The dotted configuration key that selects a registration of ``kind`` by name."""
    return _HOOKS[kind][2]


@dataclass(frozen=True)
class Registered(Generic[SpecT]):
    """A spec and the plugin that registered it."""

    spec: SpecT
    plugin: str


@dataclass
class Registrations:
    """Every spec returned by the registration hooks, by kind and then by name, and the
    plugin records they were collected from (to explain a name nobody registered)."""

    search_backends: dict[str, Registered[SearchBackendSpec]] = field(default_factory=dict)
    connector_gateways: dict[str, Registered[ConnectorGatewaySpec]] = field(default_factory=dict)
    model_providers: dict[str, Registered[ModelProviderSpec]] = field(default_factory=dict)
    approval_policies: dict[str, Registered[ApprovalPolicySpec]] = field(default_factory=dict)
    cli_commands: dict[str, Registered[CliCommandSpec]] = field(default_factory=dict)
    web_search_providers: dict[str, Registered[WebSearchProviderSpec]] = field(default_factory=dict)
    image_providers: dict[str, Registered[ImageProviderSpec]] = field(default_factory=dict)
    memory_providers: dict[str, Registered[MemoryProviderSpec]] = field(default_factory=dict)
    records: list[PluginRecord] = field(default_factory=list, repr=False)
    clashes: dict[tuple[RegistrationKind, str], list[str]] = field(default_factory=dict)
    """The plugins that registered one name of one kind, each an error, so the name is
    nobody's: a selection of it says so instead of calling it unknown."""
    locate: Callable[[str], str] | None = field(default=None, repr=False)
    """``PATH:LINE: `` of a dotted configuration key (the host's configuration file): an
    unknown name selected by its key is named where it is written, as every configuration
    error is."""

    def table(self, kind: RegistrationKind) -> dict[str, Registered[Any]]:
        """The name -> registration table of ``kind``."""
        tables: dict[RegistrationKind, dict[str, Any]] = {
            "search_backend": self.search_backends,
            "connector_gateway": self.connector_gateways,
            "model_provider": self.model_providers,
            "approval_policy": self.approval_policies,
            "cli_command": self.cli_commands,
            "web_search_provider": self.web_search_providers,
            "image_provider": self.image_providers,
            "memory_provider": self.memory_providers,
        }
        return tables[kind]

    def by_plugin(self) -> dict[str, list[str]]:
        """What each plugin registered by name, as :meth:`label` words it without the plugin:
        ``{"media": ["image provider 'openai'"]}`` (kinds in hook order, names sorted)."""
        found: dict[str, list[str]] = {}
        for kind in _HOOKS:
            for name, registered in sorted(self.table(kind).items()):
                found.setdefault(registered.plugin, []).append(f"{kind.replace('_', ' ')} {name!r}")
        return found

    def label(self, kind: RegistrationKind, name: str) -> str:
        """``memory provider 'file' (plugin 'memory')``: the registration ``name`` of ``kind``
        as an error about what it did names it."""
        return f"{kind.replace('_', ' ')} {name!r} (plugin {self.table(kind)[name].plugin!r})"

    def select(self, kind: RegistrationKind, name: str, *, origin: str | None = None) -> Any:
        """The spec of ``kind`` registered as ``name``.

        Raises :class:`~hermes_core._errors.RegistrationError` listing the valid names when no
        plugin registered ``name``; :class:`~hermes_core._errors.UnloadedPluginError`, naming
        it, why it did not load and how to make it load, when a plugin of that name exists but
        did not load (gated, disabled, not enabled, broken: :mod:`hermes_core._plugins.explain`).
        ``origin`` says who asked for ``name`` (default: the configuration key of ``kind``).
        """
        table = self.table(kind)
        found = table.get(name)
        if found is not None:
            return found.spec
        valid = ", ".join(sorted(table)) or "none (no loaded plugin registers one)"
        what = kind.replace("_", " ")
        where = origin or "set by " + _HOOKS[kind][2]
        at = self.locate(_HOOKS[kind][2]) if origin is None and self.locate is not None else ""
        unknown = f"{at}unknown {what} {name!r} ({where})"
        clash = self.clashes.get((kind, name))
        if clash is not None:
            raise RegistrationError(
                f"{at}{what} {name!r} ({where}) {clashing(clash)}; valid names: {valid}"
            )
        record = unloaded_plugin(self.records, name)
        if record is None:
            hint = did_you_mean(name, table)
            unloaded = may_register(self.records, _HOOKS[kind][0])
            message = f"{unknown}; valid names: {valid}" + (hint and f".{hint}")
            if not unloaded:
                raise RegistrationError(message)
            # One of them may be its plugin (installed, or broken at import): contained as an
            # unloaded plugin of that name is, so that it fails alone.
            raise UnloadedPluginError(
                message + may_register_text(unloaded, "register"), plugin=unloaded[0].name
            )
        raise UnloadedPluginError(
            f"{unknown}: {why_not_loaded(record)}; valid names: {valid}", plugin=record.name
        )


def clashing(plugins: list[str]) -> str:
    """``is registered by two plugins, 'a' and 'b', so neither's is used: ...``: the name's
    registrations, not the plugins (their other tools and hooks load)."""
    *first, last = map(repr, sorted(plugins))
    count, none = (
        ("two", "neither's") if len(plugins) == 2 else (str(len(plugins)), "none of theirs")
    )
    return (
        f"is registered by {count} plugins, {', '.join(first)} and {last}, so {none} is "
        "used: disable one of them (hermes plugins disable NAME)"
    )


def collect_registrations(
    pm: pluggy.PluginManager,
    records: list[PluginRecord],
    *,
    strict: bool,
) -> Registrations:
    """Call every registration hook plugin by plugin, so each spec is known with its plugin.

    A hook that raises, is a coroutine function (``async def``), or returns something other
    than a list of the right specs marks its plugin ``error`` and takes it out whole (raised in
    strict mode). A name of one kind registered by two plugins is neither's: each of them is an
    ``error`` naming all of them (in strict mode a
    :class:`~hermes_core._errors.RegistrationError`), its other registrations, tools and hooks
    kept, as for a tool name (``plugin_tools._without_clashes``).
    """
    by_name = {r.name: r for r in records if r.winner and r.plugin is not None}
    result = Registrations(records=records)
    for kind, (hook_name, spec_type, _) in _HOOKS.items():
        table = result.table(kind)
        hook: Any = getattr(pm.hook, hook_name)
        # pluggy's call order: the highest source first.
        for impl in reversed(hook.get_hookimpls()):
            record = by_name.get(impl.plugin_name)
            plugin_name = impl.plugin_name
            specs = _call(impl.function, plugin_name, hook_name, spec_type, record, strict)
            for spec in specs:
                other = table.get(spec.name)
                if other is None:
                    table[spec.name] = Registered(spec, plugin_name)
                else:  # another plugin's: one plugin's names were checked apart by _call
                    result.clashes.setdefault((kind, spec.name), [other.plugin]).append(plugin_name)
    _refuse_clashes(result, records, strict)
    # Only the plugins a hook of theirs failed (taken out): a clash keeps its plugins loaded.
    drop_plugins(
        pm,
        result,
        {r.name for r in records if r.winner and r.status == "error" and r.plugin is None},
    )
    return result


def _refuse_clashes(result: Registrations, records: list[PluginRecord], strict: bool) -> None:
    """Each name of :attr:`Registrations.clashes` taken out of its table, and each plugin that
    registered one an ``error`` naming all of them (raised in ``strict`` mode), still loaded."""
    problems: dict[str, list[str]] = {}
    for (kind, name), plugins in sorted(result.clashes.items()):
        message = f"{kind.replace('_', ' ')} {name!r} {clashing(plugins)}"
        if strict:
            raise RegistrationError(message)
        result.table(kind).pop(name, None)
        for plugin in plugins:
            problems.setdefault(plugin, []).append(message)
    for plugin, messages in problems.items():
        record = next((r for r in records if r.name == plugin and r.winner), None)
        if record is not None and record.status != "error":
            record.fail("; ".join(messages), unload=False)


def drop_plugins(pm: pluggy.PluginManager, registrations: Registrations, names: set[str]) -> None:
    """Take the plugins ``names`` (failed ones) out: unregistered from ``pm``, so none of their
    hooks runs, and their specs gone from ``registrations``."""
    for name in names:
        if pm.has_plugin(name):
            pm.unregister(name=name)
    for kind in _HOOKS:
        table = registrations.table(kind)
        for spec_name in [key for key, found in table.items() if found.plugin in names]:
            del table[spec_name]


def _call(
    function: Callable[[], Any],
    plugin_name: str,
    hook_name: str,
    spec_type: type[Any],
    record: PluginRecord | None,
    strict: bool,
) -> list[Any]:
    try:
        returned = function()
    except Exception as exc:
        where = raised_at(exc, record.path if record is not None else None)
        message = f"{hook_name} raised {type(exc).__name__}: {exc}" + (
            f" (at {where})" if where else ""
        )
        return _reject(record, plugin_name, message, strict, traceback.format_exc())
    problem = coroutine_problem(returned, hook_name)
    if problem is not None:
        return _reject(record, plugin_name, problem, strict, None)
    if returned is None:
        return []
    if isinstance(returned, spec_type):
        returned = [returned]
    if not isinstance(returned, list | tuple):
        got = type(returned).__name__
        message = f"{hook_name} must return a list of {spec_type.__name__}, got {got}"
        return _reject(record, plugin_name, message, strict, None)
    wrong = [item for item in returned if not isinstance(item, spec_type)]
    if wrong:
        message = (
            f"{hook_name} must return a list of {spec_type.__name__}, got a list holding "
            f"{type(wrong[0]).__name__} {shown(wrong[0])}"
        )
        return _reject(record, plugin_name, message, strict, None)
    names = [item.name for item in returned]
    counts = Counter(names)  # linear: a hook may return thousands of specs
    twice = next((name for name in names if counts[name] > 1), None)
    if twice is not None:
        message = f"{hook_name} returned the name {twice!r} twice: give each spec its own name"
        return _reject(record, plugin_name, message, strict, None)
    return list(returned)


def coroutine_problem(returned: object, hook_name: str) -> str | None:
    """The error for a registration hook that returned an awaitable (an ``async def``
    implementation), after closing it so Python does not warn that it was never awaited;
    ``None`` for anything else."""
    if not inspect.isawaitable(returned):
        return None
    close = getattr(returned, "close", None)
    if callable(close):
        close()
    return (
        f"{hook_name}: registration hooks must be plain functions, not coroutines "
        "(define it with def, not async def)"
    )


def _reject(
    record: PluginRecord | None,
    plugin_name: str,
    message: str,
    strict: bool,
    trace: str | None,
) -> list[Any]:
    if strict:
        raise PluginError(plugin_name, message)
    if record is not None:
        record.fail(message, trace)
    return []
