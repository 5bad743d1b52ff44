"""``PluginRuntime``: a host's plugins from loading to what the configuration selects of them.

It holds the plugins given in code (the source ``direct``), the loaded
:class:`~hermes_core._plugins.loader.PluginSet` with its records and warnings, the
registrations collected from it, the hook directories and shell hooks registered after it, and
each plugin's ``hermes_tools`` in the registry. It is the selection step's one caller: the
search backend, the connector gateway (and the hosted connectors over it) and the approval
policy that the configuration names are built here, and a factory that fails is recorded as
its plugin's error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core._config.errors import key_where
from hermes_core._errors import HermesError, PluginError, RegistrationError, UnloadedPluginError
from hermes_core._plugin_names import normalize_name
from hermes_core._plugins.explain import remedy
from hermes_core._plugins.loader import PluginSet, load_plugins
from hermes_core._plugins.plugin_tools import register_plugin_tools
from hermes_core._plugins.registrations import Registrations, collect_registrations
from hermes_core._plugins.selection import (
    SelectableKind,
    UnavailableSearchBackend,
    build_selected,
    configured_selections,
)
from hermes_core._specs import PluginContext

if TYPE_CHECKING:
    from hermes_core._approvals.policy import ApprovalPolicy
    from hermes_core._config import Config
    from hermes_core._hooks import HookDirectory, RegisteredHooks
    from hermes_core._image_providers import ImageProvider
    from hermes_core._paths import Environment
    from hermes_core._registry import Registry
    from hermes_core._specs import ConnectorGatewaySpec, SearchBackendSpec
    from hermes_core._web_search import WebSearchProvider
    from hermes_core.agent._wire import ModelProvider, ModelSettings
    from hermes_core.connectors._gateway import ConnectorGateway
    from hermes_core.connectors._service import Connectors
    from hermes_core.search._backend import SearchBackend

logger = logging.getLogger("hermes_core._host")


class PluginRuntime:
    """The plugins of one host, over its ``registry``; ``strict`` raises the first plugin error
    instead of recording it. Nothing is loaded until :meth:`load_plugins`."""

    def __init__(
        self,
        config: Config,
        env: Environment,
        registry: Registry,
        *,
        config_path: Path | None = None,
        strict: bool = False,
    ) -> None:
        self.config = config
        self.env = env
        self.strict = strict
        self._registry = registry
        self._config_path = config_path
        self._direct: list[tuple[str, object]] = []
        self._plugins: PluginSet | None = None
        self._closed = False
        self._registrations: Registrations | None = None
        self._hooks: RegisteredHooks | None = None
        self._connectors: Connectors | None = None

    # Lifetime ---------------------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> str:
        """Take ``plugin`` (a module, or an object whose methods carry ``@hookimpl``) as an
        enabled plugin of the source ``direct``, and return its name; before :meth:`load_plugins`.

        As with pluggy's ``register``, ``name`` defaults to the plugin's ``__name__`` (a
        module's) or its class name; it is normalized like every plugin name. Direct plugins
        skip discovery and the gate, are registered after every discovered plugin in the order
        given (so their hooks run first and their tools override discovered ones of the same
        name), and shadow a discovered plugin of the same name, which is then not imported.
        The plugin's failures are reported as any plugin's: in the records, or raised in
        strict mode.
        """
        if self._plugins is not None:
            raise HermesError("register plugins before the host starts")
        given = name if name is not None else getattr(plugin, "__name__", type(plugin).__name__)
        normalized = normalize_name(str(given).rpartition(".")[2] if name is None else given)
        if not normalized:
            raise ValueError(f"plugin name {given!r} is empty once normalized")
        for known, other in self._direct:
            if known == normalized:
                raise ValueError(f"a plugin named {normalized!r} is already registered")
            if other is plugin:
                raise ValueError(f"this plugin is already registered as {known!r}")
        self._direct.append((normalized, plugin))
        return normalized

    def load_plugins(self) -> None:
        """Load the plugins and collect what they register (their tools included), without
        the catalogs: what ``hermes plugins`` needs. :meth:`Host.start
        <hermes_core._host.Host.start>` does this first."""
        if self._plugins is not None:
            raise HermesError("this host is already started")
        if self._closed:
            raise HermesError(
                "this host was closed and cannot start again: make a new Host(config, env)"
            )
        strict = self.strict
        plugins = load_plugins(
            self.config, self.env, config_path=self._config_path, strict=strict, direct=self._direct
        )
        for warning in plugins.warnings:
            logger.warning("%s", warning)
        try:
            self._registrations = collect_registrations(plugins.pm, plugins.records, strict=strict)
            # After the registration hooks (one that raised takes its plugin out whole), before
            # hermes_tools, whose failures are said where they happen.
            for record in plugins.records:
                if record.status == "error":
                    logger.warning(
                        "plugin %r (%s): %s%s",
                        record.name,
                        record.source,
                        record.message,
                        remedy(record),
                    )
            self._registrations.locate = partial(key_where, self.config)
            self._plugins = plugins
            register_plugin_tools(
                plugins, self._registry, self.registrations, self.plugin_context, strict=strict
            )
            from hermes_core._hooks import register_hooks

            self._hooks = register_hooks(
                plugins.pm, self.config, self.env, strict=strict, config_path=self._config_path
            )
        except BaseException:
            self._plugins = None
            self._registrations = None
            _unregister_all(plugins)
            raise
        for warning in self._hooks.warnings:
            logger.warning("%s", warning)

    def close(self) -> None:
        """Unregister every plugin and hook; forget the hosted connectors. The tools stay in
        the registry, so a closed runtime never loads again."""
        self._closed = self._closed or self._plugins is not None
        if self._hooks is not None:
            self._hooks.unregister()
        if self._plugins is not None:
            _unregister_all(self._plugins)
        self._hooks = None
        self._plugins = None
        self._registrations = None
        self._connectors = None

    async def close_connectors(self) -> None:
        """Close the hosted connectors, when they were used."""
        connectors, self._connectors = self._connectors, None
        if connectors is not None:
            await connectors.aclose()

    def started(self) -> PluginSet:
        """The loaded plugins; raises :class:`~hermes_core._errors.HermesError` before."""
        if self._plugins is None:
            raise HermesError("the host is not started: use 'async with Host(...) as host'")
        return self._plugins

    @property
    def registrations(self) -> Registrations:
        """The specs returned by the loaded plugins' registration hooks."""
        self.started()
        assert self._registrations is not None
        return self._registrations

    @property
    def hook_directories(self) -> list[HookDirectory]:
        """A record per hook directory, with its status; only the enabled ones were imported."""
        self.started()
        return self._hooks.directories if self._hooks is not None else []

    @property
    def warnings(self) -> list[str]:
        """What will not load or run as configured: the plugins' warnings, then the hooks'."""
        return [*self.started().warnings, *self.hook_warnings]

    @property
    def hook_warnings(self) -> list[str]:
        """The hooks' warnings (:func:`~hermes_core._hooks.register_hooks`)."""
        self.started()
        return list(self._hooks.warnings) if self._hooks is not None else []

    def passed_variables(self) -> list[str]:
        """The names that pass the scrub of every session's child processes:
        ``code_execution.env_passthrough`` and the ``requires_env`` of the loaded plugins."""
        from hermes_core._execution.environment import configured_passthrough

        required = [
            variable
            for record in self.started().loaded
            if record.candidate.manifest is not None
            for variable in record.candidate.manifest.requires_env
        ]
        return [*configured_passthrough(self.config), *required]

    def missing_tool(self, name: str) -> str | None:
        """Why the tool ``name``, which the registry lacks, is missing when a plugin's manifest
        lists it or it names a tool of an MCP server added to the configuration file since the
        host read it (:mod:`hermes_core._plugins.explain`); ``None`` otherwise, and before the
        plugins are loaded."""
        from hermes_core._plugins.explain import added_mcp_server, missing_tool

        if self._plugins is None or name in self._registry:
            return None
        return missing_tool(self._plugins.records, name, self._config_path, self.env) or (
            added_mcp_server(name, self._config_path, self.env, self.config.mcp_servers)
        )

    # Selection: what the configuration names, built from its plugin -------------------------

    def plugin_context(self, plugin: str) -> PluginContext:
        """What a factory (and ``hermes_tools``) of ``plugin`` receives: config, environment,
        its own settings, and the providers its tools may use."""
        return PluginContext(
            self.config,
            self.env,
            self.config.plugins.entries.get(plugin, {}),
            plugin=plugin,
            image_builder=self.create_image_provider,
            web_search_builder=self.create_web_search_provider,
        )

    def select_search_backend(self) -> SearchBackendSpec:
        """The search backend named by ``tools.tool_search.backend``."""
        spec: SearchBackendSpec = self.registrations.select(
            "search_backend", self.config.tools.tool_search.backend
        )
        return spec

    def select_connector_gateway(self) -> ConnectorGatewaySpec:
        """The connector gateway named by ``tools.connectors.gateway``."""
        spec: ConnectorGatewaySpec = self.registrations.select(
            "connector_gateway", self.config.tools.connectors.gateway
        )
        return spec

    def _build(
        self,
        kind: SelectableKind,
        name: str,
        context: Callable[[str], PluginContext] | None = None,
        origin: str | None = None,
    ) -> Any:
        """``name`` of ``kind`` built by the selection step; a failure of its plugin is recorded
        as that plugin's error before it is raised, not logged: the caller says it, once."""
        try:
            return build_selected(
                self.registrations, kind, name, context or self.plugin_context, origin=origin
            )
        except PluginError as exc:
            self._record_failure(exc)
            raise

    def _record_failure(self, error: PluginError) -> None:
        record = self.started().get(error.plugin)
        if record is not None and record.status != "error":
            record.fail(error.detail, error.trace, unload=False, cause=error)

    def create_search_backend(self, name: str | None = None) -> SearchBackend:
        """A new, empty instance of the search backend registered as ``name`` (default:
        ``tools.tool_search.backend``), made by its plugin's factory as Tool Search makes it.

        An unknown name raises :class:`~hermes_core._errors.RegistrationError` listing the
        valid ones; a factory that raises or returns no ``SearchBackend`` raises
        :class:`~hermes_core._errors.PluginError` naming the plugin (and is listed as its
        error)."""
        return self._new_search_backend(name or self.config.tools.tool_search.backend)

    def _new_search_backend(self, name: str, chain: tuple[str, ...] = ()) -> SearchBackend:
        """The search backend ``name``, built by the selection step with a context whose
        :meth:`PluginContext.search_backend` builds further backends the same way.

        ``chain`` holds the backends whose factories asked for this one; a backend that asks
        for itself, directly or through another, is an error.
        """
        if name in chain:
            cycle = " -> ".join((*chain, name))
            raise RegistrationError(
                f"search backend {chain[-1]!r} cannot be built from itself ({cycle})"
            )
        builder = partial(self._new_search_backend, chain=(*chain, name))

        def context(plugin: str) -> PluginContext:
            return replace(self.plugin_context(plugin), backend_builder=builder)

        origin = f"asked for by search backend {chain[-1]!r}" if chain else None
        backend: SearchBackend = self._build("search_backend", name, context, origin)
        return backend

    def search_backend_or_unavailable(self, name: str) -> SearchBackend:
        """The backend ``name``, or, when its plugin fails to build it or did not load (gated,
        disabled, not enabled, broken at import), a stand-in whose searches answer with that
        failure (raised instead in strict mode)."""
        try:
            return self.create_search_backend(name)
        except (PluginError, UnloadedPluginError) as exc:
            if self.strict:
                raise
            if isinstance(exc, PluginError):  # going on without it: the start says why
                logger.warning("%s", exc)
            return UnavailableSearchBackend(exc)

    def create_connector_gateway(
        self, url: str, token: str, name: str | None = None
    ) -> ConnectorGateway:
        """A new instance of the connector gateway registered as ``name`` (default:
        ``tools.connectors.gateway``) for the gateway at ``url`` and the user's ``token``: its
        factory gets a :class:`~hermes_core.connectors._gateway.GatewayContext`. Errors as for
        :meth:`create_search_backend`."""
        from hermes_core._specs import GatewayContext

        def context(plugin: str) -> PluginContext:
            base = self.plugin_context(plugin)
            return GatewayContext(base.config, base.env, base.settings, url=url, token=token)

        gateway: ConnectorGateway = self._build(
            "connector_gateway", name or self.config.tools.connectors.gateway, context
        )
        return gateway

    def connectors(self) -> Connectors:
        """The hosted connectors (in scope when ``tools.connectors`` is enabled, has a ``url``
        and the user is signed in), over the gateway its config selects, made on first use."""
        self.started()
        if self._connectors is None:
            from hermes_core.connectors._service import Connectors

            self._connectors = Connectors(
                self.config.tools.connectors, self.env, self.create_connector_gateway
            )
        return self._connectors

    def create_model_provider(self, settings: ModelSettings) -> ModelProvider:
        """A new instance of the model provider registered as ``settings.provider``: its
        factory gets a :class:`~hermes_core._specs.ModelContext` holding ``settings``. Errors
        as for :meth:`create_search_backend`."""
        from hermes_core._specs import ModelContext

        def context(plugin: str) -> PluginContext:
            base = self.plugin_context(plugin)
            return ModelContext(base.config, base.env, base.settings, model=settings)

        provider: ModelProvider = self._build("model_provider", settings.provider, context)
        return provider

    def create_web_search_provider(self, name: str) -> WebSearchProvider:
        """A new instance of the web search provider registered as ``name``
        (``plugins.entries.web.search_provider``), its answers checked. Errors as for
        :meth:`create_search_backend`."""
        from hermes_core._web_search import CheckedWebSearch

        built = self._build("web_search_provider", name)
        return CheckedWebSearch(built, self.registrations.label("web_search_provider", name))

    def create_image_provider(self, name: str) -> ImageProvider:
        """A new instance of the image provider registered as ``name``, its answers checked.
        Errors as for :meth:`create_search_backend`."""
        from hermes_core._image_providers import CheckedImages

        built = self._build("image_provider", name)
        return CheckedImages(built, name, self.registrations.label("image_provider", name))

    def create_approval_policy(self) -> tuple[ApprovalPolicy, str]:
        """The approval policy named by ``approvals.policy``, and how messages name it."""
        name = self.config.approvals.policy
        policy: ApprovalPolicy = self._build("approval_policy", name)
        return policy, self.registrations.label("approval_policy", name)

    def check_selected(self) -> None:
        """Select the search backend, and the connector gateway when connectors are configured,
        so an unknown name raises now, listing the valid names.

        The backend itself is made on the first search, the gateway on its first use. A
        backend or gateway whose plugin fails to build it, or did not load (gated, disabled,
        not enabled, broken at import: :class:`~hermes_core._errors.UnloadedPluginError`), does
        not raise here (but in strict mode): ``tool_search`` (or the connector tool) answers
        with that failure and every other tool works. The approval policy is no such part:
        every call needs it, so a policy that cannot be had stops the start."""
        selections: list[Callable[[], object]] = [self.select_search_backend]
        if self.config.tools.connectors.configured:  # the service is not made for this
            selections.append(self.select_connector_gateway)
        for select in selections:
            try:
                select()
            except UnloadedPluginError:
                if self.strict:
                    raise

    def check_plugins(self) -> list[str]:
        """Build once what the configuration selects from a plugin that is not bundled (the
        search backend, the approval policy, and the connector gateway when
        ``tools.connectors.url`` is set), so a factory that fails is listed as its plugin's
        error; return the problems of names no loaded plugin registers (each naming the plugin
        of that name that did not load, when there is one).

        Bundled factories are not run: they ship and are tested with hermes-core, and the
        ``bm25`` one imports numpy, which listing plugins must not pay for.
        """
        connectors = self.config.tools.connectors
        problems: list[str] = []
        for kind, name in configured_selections(self.config):
            found = self.registrations.table(kind).get(name)
            if found is None:
                try:
                    self.registrations.select(kind, name)
                except HermesError as exc:
                    problems.append(str(exc))
                continue
            record = self.started().get(found.plugin)
            if record is not None and record.source == "bundled":
                continue
            try:
                if kind == "search_backend":  # with the context that builds backends it asks for
                    self.create_search_backend(name)
                elif kind == "connector_gateway":  # built, never used: no request is made
                    self.create_connector_gateway(connectors.url or "", "")
                else:
                    self._build(kind, name)
            except PluginError:
                pass  # recorded on its plugin
            except HermesError as exc:
                problems.append(str(exc))
        return problems


def _unregister_all(plugins: PluginSet) -> None:
    for record in plugins.records:
        if record.plugin is not None and plugins.pm.is_registered(record.plugin):
            plugins.pm.unregister(record.plugin)
