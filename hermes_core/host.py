"""``Host``: everything hermes-core builds from a ``Config`` and an ``Environment``.

There is no module-level host or plugin manager: build as many hosts as you like::

    async with Host(config, env) as host:
        session = host.new_session()
        assembly = host.assemble(context_length=200_000, session=session)
        result = await host.dispatch("tool_search", {"queries": ["current time"]}, session)

Entering the host loads the plugins, registers their tools and the configured catalogs,
selects the approval policy and the search backend, and connects the MCP servers. Every call,
direct or through the bridge, goes through :meth:`Host.dispatch`.

Plugin objects can also be given in code, before the host starts, as pluggy's ``register``
takes them (tests do, and ``hermes_core.testing.make_host`` builds such a host)::

    host = Host(config, env)
    host.register(MyPlugin(), name="mine")
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from hermes_core.errors import HermesError, PluginError, RegistrationError, UnloadedPluginError
from hermes_core.plugin_names import normalize_name
from hermes_core.plugins.candidates import SOURCES
from hermes_core.plugins.loader import STRICT_FLAG, PluginSet, load_plugins
from hermes_core.plugins.registrations import (
    Registrations,
    collect_registrations,
    coroutine_problem,
    drop_plugins,
)
from hermes_core.plugins.selection import SelectableKind, UnavailableSearchBackend, build_selected
from hermes_core.project_trust import config_refusal
from hermes_core.registry import EnabledTools, Registry
from hermes_core.session import Session
from hermes_core.specs import PluginContext
from hermes_core.tools import ToolResult

if TYPE_CHECKING:
    import pluggy

    from hermes_core.approvals.policy import ApprovalPolicy
    from hermes_core.approvals.prompt import PromptTransport
    from hermes_core.availability import Availability
    from hermes_core.config import Config, McpServerConfig
    from hermes_core.connectors.gateway import ConnectorGateway
    from hermes_core.connectors.service import Connectors
    from hermes_core.dispatch import CallPlan, Dispatcher
    from hermes_core.hooks import HookDirectory, RegisteredHooks
    from hermes_core.mcp.startup import McpStartup
    from hermes_core.mcp.supervisor import ConnectProgress, McpSupervisor, ServerStatus
    from hermes_core.paths import Environment
    from hermes_core.plugins.records import PluginRecord
    from hermes_core.search.assembly import Assembly
    from hermes_core.search.backend import SearchBackend
    from hermes_core.search.toolsearch import ToolSearch
    from hermes_core.specs import ConnectorGatewaySpec, SearchBackendSpec
    from hermes_core.tools import Tool, ToolResult

logger = logging.getLogger("hermes_core.host")

_CATALOG_OWNER = "catalog"
_BRIDGE_OWNER = "bridge"
_CONNECTIONS_OWNER = "connections"
_MCP_OWNER = "mcp:"


class Host:
    """The tool layer of one agent, as an async context manager.

    The dispatcher and the tool search are built on first use, so a host used only to load
    plugins needs no approval policy or search backend; an unknown ``approvals.policy`` or
    ``tools.tool_search.backend`` is reported, with the valid names, by the first call.

    ``config_path`` is the file ``config`` was loaded from: a file inside the working directory
    cannot enable project plugins, and relative catalog paths are read from its directory.
    ``mcp_reconnect`` asks for supervision: MCP servers that fail or go away are connected
    again with backoff, as a long-running host (``hermes serve``, an agent) needs. Without it
    (the default, right for one-shot commands and scripts) a failed server stays unavailable
    with its reason and nothing is retried behind the caller's back. ``mcp_backoff`` is the
    first reconnect delay of a dead MCP server, in seconds. ``mcp_startup`` says which MCP
    servers the start waits for, connects in the background or leaves alone, from their tool
    manifests in the cache directory (:class:`~hermes_core.mcp.startup.McpStartup`; by default
    servers with a manifest have their tools registered at once and connect in the background,
    the others are waited for); ``mcp_progress`` hears how the servers the start waits for are
    doing. ``strict`` (default: ``HERMES_STRICT_PLUGINS``) raises the first plugin error instead
    of recording it.
    """

    def __init__(
        self,
        config: Config,
        env: Environment,
        *,
        config_path: Path | None = None,
        mcp_reconnect: bool = False,
        mcp_backoff: float = 1.0,
        mcp_startup: McpStartup | None = None,
        mcp_progress: ConnectProgress | None = None,
        strict: bool | None = None,
    ) -> None:
        self.config = config
        self.env = env
        self.config_path = config_path
        self.registry = Registry()
        self._mcp_reconnect = mcp_reconnect
        self._mcp_backoff = mcp_backoff
        self._mcp_startup = mcp_startup
        self._mcp_progress = mcp_progress
        self._strict = env.flag(STRICT_FLAG) if strict is None else strict
        self._direct: list[tuple[str, object]] = []
        self._plugins: PluginSet | None = None
        self._registrations: Registrations | None = None
        self._dispatcher: Dispatcher | None = None
        self._tool_search: ToolSearch | None = None
        self._availability: Availability | None = None
        self._mcp: McpSupervisor | None = None
        self._hooks: RegisteredHooks | None = None
        self._connectors: Connectors | None = None

    @classmethod
    def from_environment(cls, env: Environment) -> Host:
        """A host for the user's own configuration, ``env.config_path`` (which must exist when
        ``--config`` or ``HERMES_CONFIG`` named it)."""
        from hermes_core.config import load_config

        env.check_config_file()
        return cls(load_config(env.config_path), env, config_path=env.config_path)

    # Lifetime ---------------------------------------------------------------------------------

    async def __aenter__(self) -> Host:
        self.start()
        try:
            await self._connect_mcp()
        except BaseException:
            await self._close_mcp()
            self.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self._close_connectors()
            await self._close_mcp()
        finally:
            self.close()

    async def _close_connectors(self) -> None:
        connectors, self._connectors = self._connectors, None
        if connectors is not None:
            await connectors.aclose()

    async def _close_mcp(self) -> None:
        """End every MCP server, also when the start failed or was cancelled half-way (the
        supervisor's task group waits for each server's child process to end, cancelled or not)."""
        mcp, self._mcp = self._mcp, None
        if mcp is not None:
            await mcp.aclose()

    def register(self, plugin: object, name: str | None = None) -> str:
        """Take ``plugin`` (a module, or an object whose methods carry ``@hookimpl``) as an
        enabled plugin of the source ``direct``, and return its name; before the host starts.

        As with pluggy's ``register``, ``name`` defaults to the plugin's ``__name__`` (a
        module's) or its class name; it is normalized like every plugin name. Direct plugins
        skip discovery and the gate, are registered after every discovered plugin in the order
        given (so their hooks run first and their tools override discovered ones of the same
        name), and shadow a discovered plugin of the same name, which is then not imported.
        The plugin's failures are reported as any plugin's: in :attr:`plugins`, or raised in
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

    def start(self) -> None:
        """Load plugins, register their tools and the configured catalogs; the dispatcher and
        the tool search are built on first use.

        ``async with`` does this and also connects the MCP servers; call ``start`` alone for
        what needs no event loop (listing plugins and local tools).
        """
        self.load_plugins()
        try:
            self._register_catalogs()
            self._register_bridge()
            self._register_connections()
        except BaseException:
            self.close()
            raise

    def load_plugins(self) -> None:
        """Load the plugins and collect what they register (their tools included), without
        the catalogs: what ``hermes plugins`` needs. :meth:`start` does this first."""
        if self._plugins is not None:
            raise HermesError("this host is already started")
        strict = self._strict
        plugins = load_plugins(
            self.config, self.env, config_path=self.config_path, strict=strict, direct=self._direct
        )
        for warning in plugins.warnings:
            logger.warning("%s", warning)
        for record in plugins.records:
            if record.status == "error":
                logger.warning("plugin %r (%s): %s", record.name, record.source, record.message)
        try:
            self._registrations = collect_registrations(plugins.pm, plugins.records, strict=strict)
            self._plugins = plugins
            self._register_plugin_tools(plugins, strict=strict)
            from hermes_core.hooks import register_hooks

            self._hooks = register_hooks(
                plugins.pm, self.config, self.env, strict=strict, config_path=self.config_path
            )
        except BaseException:
            self._plugins = None
            self._registrations = None
            _unregister_all(plugins)
            raise
        for warning in self._hooks.warnings:
            logger.warning("%s", warning)

    def close(self) -> None:
        """Flush the activity log and unregister every plugin."""
        if self._dispatcher is not None:
            self._dispatcher.close()
        if self._hooks is not None:
            self._hooks.unregister()
        if self._plugins is not None:
            _unregister_all(self._plugins)
        self._hooks = None
        self._plugins = None
        self._registrations = None
        self._dispatcher = None
        self._tool_search = None
        self._connectors = None

    def _started(self) -> PluginSet:
        if self._plugins is None:
            raise HermesError("the host is not started: use 'async with Host(...) as host'")
        return self._plugins

    # Plugins ----------------------------------------------------------------------------------

    @property
    def plugins(self) -> list[PluginRecord]:
        """A record per discovered plugin copy, with its status (the rows of the CLI list)."""
        return self._started().records

    @property
    def hook_directories(self) -> list[HookDirectory]:
        """A record per hook directory of ``$HERMES_HOME/hooks`` (the rows of ``hermes hooks
        list``), with its status; only the enabled ones were imported."""
        self._started()
        return self._hooks.directories if self._hooks is not None else []

    @property
    def warnings(self) -> list[str]:
        """What discovery ignored and why (impostors, unreadable directories, unknown keys)."""
        return self._started().warnings

    @property
    def pm(self) -> pluggy.PluginManager:
        """The pluggy plugin manager holding the loaded plugins."""
        return self._started().pm

    @property
    def registrations(self) -> Registrations:
        """The specs returned by the loaded plugins' registration hooks."""
        self._started()
        assert self._registrations is not None
        return self._registrations

    def plugin_context(self, plugin: str) -> PluginContext:
        """What a factory of ``plugin`` receives: config, environment and its own settings."""
        return PluginContext(self.config, self.env, self.config.plugins.entries.get(plugin, {}))

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

    # Selection: what the configuration names, built from its plugin -------------------------

    def _build(
        self,
        kind: SelectableKind,
        name: str,
        context: Callable[[str], PluginContext] | None = None,
        origin: str | None = None,
    ) -> Any:
        """``name`` of ``kind`` built by the selection step; a failure of its plugin is recorded
        as that plugin's error before it is raised."""
        try:
            return build_selected(
                self.registrations, kind, name, context or self.plugin_context, origin=origin
            )
        except PluginError as exc:
            self._record_failure(exc)
            raise

    def _record_failure(self, error: PluginError) -> None:
        record = self._started().get(error.plugin)
        if record is not None and record.status != "error":
            logger.warning("plugin %r (%s): %s", record.name, record.source, error.detail)
            record.fail(error.detail, error.trace, unload=False)

    def create_search_backend(self, name: str | None = None) -> SearchBackend:
        """A new, empty instance of the search backend registered as ``name`` (default:
        ``tools.tool_search.backend``), made by its plugin's factory as Tool Search makes it.

        An unknown name raises :class:`~hermes_core.errors.RegistrationError` listing the
        valid ones; a factory that raises or returns no ``SearchBackend`` raises
        :class:`~hermes_core.errors.PluginError` naming the plugin (and is listed as its
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

    def create_connector_gateway(
        self, url: str, token: str, name: str | None = None
    ) -> ConnectorGateway:
        """A new instance of the connector gateway registered as ``name`` (default:
        ``tools.connectors.gateway``) for the gateway at ``url`` and the user's ``token``: its
        factory gets a :class:`~hermes_core.specs.GatewayContext`. Errors as for
        :meth:`create_search_backend`."""
        from hermes_core.specs import GatewayContext

        def context(plugin: str) -> PluginContext:
            base = self.plugin_context(plugin)
            return GatewayContext(base.config, base.env, base.settings, url=url, token=token)

        gateway: ConnectorGateway = self._build(
            "connector_gateway", name or self.config.tools.connectors.gateway, context
        )
        return gateway

    @property
    def connectors(self) -> Connectors:
        """The hosted connectors (in scope when ``tools.connectors`` is enabled, has a ``url``
        and the user is signed in), over the gateway its config selects, built on first use."""
        self._started()
        if self._connectors is None:
            from hermes_core.connectors.service import Connectors

            self._connectors = Connectors(
                self.config.tools.connectors, self.env, self.create_connector_gateway
            )
        return self._connectors

    def _create_approval_policy(self) -> ApprovalPolicy:
        policy: ApprovalPolicy = self._build("approval_policy", self.config.approvals.policy)
        return policy

    def _search_backend_or_unavailable(self, name: str) -> SearchBackend:
        """The backend ``name``, or, when its plugin fails to build it or did not load (gated,
        disabled, not enabled, broken at import), a stand-in whose searches answer with that
        failure (raised instead in strict mode)."""
        try:
            return self.create_search_backend(name)
        except (PluginError, UnloadedPluginError) as exc:
            if self._strict:
                raise
            return UnavailableSearchBackend(exc)

    def check_plugins(self) -> list[str]:
        """Build once what the configuration selects from a plugin that is not bundled (the
        search backend, the approval policy, and the connector gateway when
        ``tools.connectors.url`` is set), so a factory that fails is listed as its plugin's
        error; return the problems of names no loaded plugin registers (each naming the plugin
        of that name that did not load, when there is one).

        Bundled factories are not run: they ship and are tested with hermes-core, and the
        ``bm25`` one imports numpy, which listing plugins must not pay for.
        """
        wanted: list[tuple[SelectableKind, str]] = [
            ("search_backend", self.config.tools.tool_search.backend),
            ("approval_policy", self.config.approvals.policy),
        ]
        connectors = self.config.tools.connectors
        if connectors.enabled and connectors.url:
            wanted.append(("connector_gateway", connectors.gateway))
        problems: list[str] = []
        for kind, name in wanted:
            found = self.registrations.table(kind).get(name)
            if found is None:
                try:
                    self.registrations.select(kind, name)
                except HermesError as exc:
                    problems.append(str(exc))
                continue
            record = self._started().get(found.plugin)
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

    # Tools ------------------------------------------------------------------------------------

    def _register_plugin_tools(self, plugins: PluginSet, *, strict: bool) -> None:
        """Each plugin's ``hermes_tools``, one plugin at a time so a failure names it and the
        others still register; a higher plugin source overrides a tool of the same name. A
        plugin whose ``hermes_tools`` fails is an ``error``: none of its hooks runs after, and
        nothing it registered is kept."""
        arguments = {"config": self.config, "env": self.env}
        failed: set[str] = set()
        # In the order the plugins were registered (source by source), which the registry keeps:
        # pluggy's own list puts trylast implementations (the bundled ones) in reverse.
        registered = {name: index for index, (name, _) in enumerate(plugins.pm.list_name_plugin())}
        impls = plugins.pm.hook.hermes_tools.get_hookimpls()
        for impl in sorted(impls, key=lambda impl: registered.get(impl.plugin_name, 0)):
            record = plugins.get(impl.plugin_name)
            rank = SOURCES.index(record.source) if record is not None else 0
            try:
                tools = impl.function(*(arguments[name] for name in impl.argnames)) or ()
                problem = coroutine_problem(tools, "hermes_tools")
                if problem is not None:
                    raise TypeError(problem)
                if not isinstance(tools, list | tuple):
                    raise TypeError(f"expected a list of Tool, got {type(tools).__name__}")
                self.registry.register_all(tools, owner=impl.plugin_name, precedence=rank)
            except Exception as exc:
                message = f"hermes_tools failed: {type(exc).__name__}: {exc}"
                if strict:
                    raise PluginError(impl.plugin_name, message) from exc
                logger.warning("plugin %r: %s", impl.plugin_name, message)
                failed.add(impl.plugin_name)
                if record is not None:
                    record.fail(message, traceback.format_exc())
        if failed:
            assert self._registrations is not None
            drop_plugins(plugins.pm, self._registrations, failed)
            for name in failed:
                self.registry.unregister_owner(name)

    def _register_catalogs(self) -> None:
        if not self.config.tools.catalogs:
            return
        from hermes_core.gc_pause import collector_paused
        from hermes_core.search.catalog import catalog_blocks

        base = self.config_path.parent if self.config_path is not None else self.env.cwd
        with collector_paused():
            # Each catalog is one block, its tools made on first use; from the catalog cache
            # a start neither parses nor checks the file again (docs/tool-search.md).
            blocks = catalog_blocks(
                self.config.tools.catalogs, base, owner=_CATALOG_OWNER, cache_dir=self.env.cache_dir
            )
            with self.registry.batch():
                for block in blocks:
                    self.registry.register_block(block, owner=_CATALOG_OWNER)

    def _build_dispatcher(self) -> Dispatcher:
        from hermes_core.dispatch import Dispatcher
        from hermes_core.execution.caller import ToolCallers

        passthrough = self.config.code_execution.env_passthrough
        return Dispatcher(
            self.registry,
            self.pm,
            self._create_approval_policy(),
            self.config,
            self.env,
            availability=self.availability,
            callers=ToolCallers([*passthrough, *_required_variables(self._started())]),
        )

    @property
    def availability(self) -> Availability:
        """Why a tool name can or cannot run here (one answer for the dispatcher and the
        bridge), knowing the MCP servers' reasons."""
        self._started()
        if self._availability is None:
            from hermes_core.availability import Availability

            self._availability = Availability(
                self.registry,
                self.config.tools,
                explain=self._mcp_refusal,
                starting_source=self._starting_mcp_server_of,
                wait_for_source=self._wait_for_mcp_server,
            )
        return self._availability

    def _build_tool_search(self) -> ToolSearch:
        from hermes_core.search.toolsearch import ToolSearch

        name = self.config.tools.tool_search.backend
        # The backend is made on the first search: a backend that cannot be made answers
        # tool_search with an error naming why, and every other tool keeps working.
        return ToolSearch(
            EnabledTools(self.registry, self.config.tools),
            self.config.tools.tool_search,
            lambda: self._search_backend_or_unavailable(name),
            self.availability,
            connectors=self.connectors,
            unavailable=self._unavailable_servers,
            new_backend=lambda: self._search_backend_or_unavailable(name),
        )

    def _register_bridge(self) -> None:
        """The three bridge tools, ordinary tools of the registry: their handlers reach the tool
        search when they run (it is built on first use)."""
        from hermes_core.search.bridge import make_bridge_tools, search_description

        tools = make_bridge_tools(
            search_description("", connectors=False),
            self._search_tools,
            self._describe_tools,
            self._plan_tool_call,
        )
        for tool in tools:
            self.registry.register(tool, owner=_BRIDGE_OWNER, bridge=True)

    def _register_connections(self) -> None:
        """``manage_connections``, always registered: its MCP actions need no sign-in."""
        from hermes_core.connectors.manage import LocalServers, manage_connections_tool

        # A server is connected in the running host only when its MCP supervisor runs: one
        # started inside a tool call would not outlive the call.
        local = LocalServers(
            self.env,
            self._mcp_configs,
            self.mcp_status,
            lambda: self.add_mcp_server if self._mcp is not None else None,
        )
        tool = manage_connections_tool(lambda: self.connectors, local)
        self.registry.register(tool, owner=_CONNECTIONS_OWNER)

    def _tool_search_or_error(self) -> ToolSearch | ToolResult:
        try:
            return self.tool_search
        except HermesError as exc:  # a configured backend that no plugin provides
            return ToolResult.error("CONFIG_ERROR", f"hermes-core cannot search tools: {exc}")

    async def _search_tools(self, session: Session, **arguments: Any) -> ToolResult:
        search = self._tool_search_or_error()
        if isinstance(search, ToolResult):
            return search
        if self._mcp is not None:
            await self._mcp.wait_for_unknown()
        return await search.handle_search(session, **arguments)

    async def _describe_tools(self, session: Session, **arguments: Any) -> ToolResult:
        search = self._tool_search_or_error()
        if isinstance(search, ToolResult):
            return search
        if self._mcp is not None:
            await self._mcp.wait_for_unknown()
        return await search.handle_describe(session, **arguments)

    def _plan_tool_call(self, arguments: Any, session: Session) -> Any:
        search = self._tool_search
        if search is None:  # built on the first call that needs it
            found = self._tool_search_or_error()
            if isinstance(found, ToolResult):
                return found
            search = found
        plan = search.plan_call(arguments, session)
        if isinstance(plan, ToolResult):
            return plan
        refused = (call.name for call in plan.calls if call.refusal is not None)
        pending = next((n for n in refused if self.availability.pending_source(n)), None)
        if pending is not None:
            return self._plan_once_started(search, arguments, session, pending)
        return plan

    async def _plan_once_started(
        self, search: ToolSearch, arguments: Any, session: Session, pending: str
    ) -> CallPlan | ToolResult:
        """The plan of a ``tool_call`` that names a tool no one has yet (``pending``), made
        again once the MCP server it would be a tool of has connected (or used up its
        ``connect_timeout``)."""
        await self.availability.settle(pending)
        return search.plan_call(arguments, session)

    def prepare_tools(self) -> None:
        """Build the dispatcher and the tool search now rather than at the first call, so an
        unknown ``approvals.policy``, ``tools.tool_search.backend`` or (when connectors are
        configured) ``tools.connectors.gateway`` raises here, listing the valid names (what a
        command line or a server wants at start). The backend itself is made on the first
        search, the gateway on its first use. A backend or gateway whose plugin fails to build
        it, or did not load (gated, disabled, not enabled, broken at import:
        :class:`~hermes_core.errors.UnloadedPluginError`), does not raise (but in strict mode,
        where the backend is built here): ``tool_search`` (or the connector tool) answers with
        that failure and every other tool works. The approval policy is no such part: every
        call needs it, so a policy that cannot be had stops the start."""
        _ = self.dispatcher, self.tool_search
        self._select_contained(self.select_search_backend)
        if self.connectors.configured():
            self._select_contained(self.select_connector_gateway)
        if self._strict:
            _ = self.tool_search.backend

    def _select_contained(self, select: Callable[[], object]) -> None:
        """``select()``, where a plugin that did not load is reported by the part that needs
        it (outside strict mode) rather than here."""
        try:
            select()
        except UnloadedPluginError:
            if self._strict:
                raise

    @property
    def dispatcher(self) -> Dispatcher:
        """The one call path (hooks, approvals, handler, activity log), built on first use
        with the policy named by ``approvals.policy``."""
        self._started()
        if self._dispatcher is None:
            self._dispatcher = self._build_dispatcher()
        return self._dispatcher

    @property
    def tool_search(self) -> ToolSearch:
        """Deferral, the listing and the three bridge tools over this host's tools, built on
        first use with the backend named by ``tools.tool_search.backend``."""
        self._started()
        if self._tool_search is None:
            self._tool_search = self._build_tool_search()
        return self._tool_search

    def new_session(
        self,
        *,
        cwd: Path | None = None,
        interactive: bool = False,
        granted_toolsets: frozenset[str] | None = None,
        prompt: PromptTransport | None = None,
        **fields: Any,
    ) -> Session:
        """A session in ``cwd`` (the host's working directory by default) whose approvals
        ``prompt`` answers (``None``: ``approvals.non_interactive``). Prefer :meth:`session`,
        which also tells the plugins' session hooks."""
        session = Session(
            cwd=cwd or self.env.cwd,
            interactive=interactive,
            granted_toolsets=granted_toolsets,
            **fields,
        )
        if prompt is not None:
            self.dispatcher.approvals.attach(session, prompt)
        return session

    @asynccontextmanager
    async def session(
        self,
        *,
        cwd: Path | None = None,
        interactive: bool = False,
        granted_toolsets: frozenset[str] | None = None,
        prompt: PromptTransport | None = None,
        **fields: Any,
    ) -> AsyncIterator[Session]:
        """A session for one conversation: ``hermes_session_start`` observers run on entry and
        ``hermes_session_end`` on exit (each plugin isolated)."""
        made = self.new_session(
            cwd=cwd,
            interactive=interactive,
            granted_toolsets=granted_toolsets,
            prompt=prompt,
            **fields,
        )
        await self.dispatcher.notify("hermes_session_start", session=made)
        try:
            yield made
        finally:
            await self.dispatcher.notify("hermes_session_end", session=made)

    def assemble(
        self, context_length: int | None = None, session: Session | None = None
    ) -> Assembly:
        """The tool array for one model request: core tools, and the bridge when tools are
        deferred. Cheap to repeat: cached by registry generation, budget and grant."""
        return self.tool_search.assemble(context_length, session)

    async def dispatch(self, name: str, arguments: Any, session: Session) -> ToolResult:
        """Run one tool call for ``session``; never raises.

        The dispatcher is the only router: a direct call runs its tool, ``tool_call`` plans the
        real calls it runs, so hooks, approvals and the activity log see the real tool.
        """
        try:
            dispatcher = self.dispatcher
        except HermesError as exc:  # a configured policy that no plugin provides
            from hermes_core.tools import ToolResult

            return ToolResult.error("CONFIG_ERROR", f"hermes-core cannot run tools: {exc}")
        return await dispatcher.dispatch(name, arguments, session)

    # MCP --------------------------------------------------------------------------------------

    def _new_supervisor(self, servers: dict[str, McpServerConfig]) -> McpSupervisor:
        from hermes_core.mcp.startup import McpStartup
        from hermes_core.mcp.supervisor import McpSupervisor

        startup = self._mcp_startup or McpStartup()
        manifests = None
        if startup.manifests:
            from hermes_core.mcp.manifests import ManifestStore

            manifests = ManifestStore(self.env.cache_dir / "mcp")
        return McpSupervisor(
            servers,
            self.env,
            on_tools_changed=self._on_mcp_tools,
            reconnect=self._mcp_reconnect,
            backoff_base=self._mcp_backoff,
            manifests=manifests,
            startup=startup,
            on_progress=self._mcp_progress,
        )

    async def _connect_mcp(self) -> None:
        if not self.config.mcp_servers:
            return
        refusal = config_refusal(self.env, self.config_path, "the MCP servers of the config")
        if refusal is not None:
            logger.warning("%s: not started", refusal)
            return
        self._mcp = self._new_supervisor(self.config.mcp_servers)
        await self._mcp.start()

    def _on_mcp_tools(self, server: str, tools: list[Tool]) -> None:
        owner = _MCP_OWNER + server
        with self.registry.batch():
            self.registry.unregister_owner(owner)
            if tools:
                self.registry.register_all(tools, owner=owner)

    async def add_mcp_server(self, name: str, config: McpServerConfig) -> ServerStatus:
        """Connect a server while the host runs; the next assembly includes its tools."""
        if self._mcp is None:
            self._mcp = self._new_supervisor({})
            await self._mcp.start()
        return await self._mcp.add(name, config)

    async def remove_mcp_server(self, name: str) -> None:
        """Disconnect a server while the host runs; its tools leave the registry."""
        if self._mcp is None:
            raise KeyError(name)
        await self._mcp.remove(name)
        self.registry.unregister_owner(_MCP_OWNER + name)

    @property
    def mcp(self) -> McpSupervisor | None:
        """The supervisor of this host's MCP servers (``None`` until one is configured or added)."""
        return self._mcp

    def _mcp_configs(self) -> dict[str, McpServerConfig]:
        """The MCP servers as they run: the configuration the host started with, and what
        ``manage_connections`` installed, enabled or replaced since (a long-running host)."""
        running = self._mcp.configs() if self._mcp is not None else {}
        return {**self.config.mcp_servers, **running}

    def mcp_status(self) -> dict[str, ServerStatus]:
        """Each configured MCP server: transport, state, reason, tool and filtered counts."""
        return self._mcp.status() if self._mcp is not None else {}

    def _unavailable_servers(self) -> dict[str, tuple[int, str]]:
        return self._mcp.unavailable() if self._mcp is not None else {}

    def _starting_mcp_server_of(self, name: str) -> str | None:
        return self._mcp.starting_server_of(name) if self._mcp is not None else None

    async def _wait_for_mcp_server(self, server: str) -> None:
        if self._mcp is not None:
            await self._mcp.wait_for_server(server)

    def _mcp_refusal(self, name: str) -> ToolResult | None:
        """The answer for a call of ``name`` when it is a filtered MCP tool or its server is
        unavailable; ``None`` otherwise."""
        return self._mcp.refusal_for(name) if self._mcp is not None else None


def _required_variables(plugins: PluginSet) -> list[str]:
    """The ``requires_env`` of the loaded plugins: they pass the scrub of scripts' environment."""
    return [
        variable
        for record in plugins.loaded
        if record.candidate.manifest is not None
        for variable in record.candidate.manifest.requires_env
    ]


def _unregister_all(plugins: PluginSet) -> None:
    for record in plugins.records:
        if record.plugin is not None and plugins.pm.is_registered(record.plugin):
            plugins.pm.unregister(record.plugin)
