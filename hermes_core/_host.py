"""``Host``: everything hermes-core builds from a ``Config`` and an ``Environment``.

There is no module-level host or plugin manager: build as many hosts as you like::

    async with Host(config, env) as host:
        session = host.new_session()
        assembly = host.assemble(context_length=200_000, session=session)
        result = await host.dispatch("tool_search", {"queries": ["current time"]}, session)

Entering the host loads the plugins (or those given in code first: ``host.register(plugin)``),
registers their tools and the catalogs, selects the approval policy and the search backend, and
connects the MCP servers. Every call, direct or through the bridge, goes through ``dispatch``.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from hermes_core._errors import HermesError
from hermes_core._mcp.hosting import McpHosting
from hermes_core._plugin_runtime import PluginRuntime
from hermes_core._plugins.loader import STRICT_FLAG
from hermes_core._registry import Registry
from hermes_core._session import Session
from hermes_core._tools import ToolResult
from hermes_core.search._bridge_tools import BridgeTools

if TYPE_CHECKING:
    import pluggy

    from hermes_core._approvals.prompt import PromptTransport
    from hermes_core._availability import Availability
    from hermes_core._config import Config
    from hermes_core._dispatch import Dispatcher
    from hermes_core._hooks import HookDirectory
    from hermes_core._mcp.startup import McpStartup
    from hermes_core._mcp.supervisor import ConnectProgress, McpSupervisor
    from hermes_core._paths import Environment
    from hermes_core._plugins.records import PluginRecord
    from hermes_core._plugins.registrations import Registrations
    from hermes_core.connectors._service import Connectors
    from hermes_core.search._assembly import Assembly
    from hermes_core.search._toolsearch import ToolSearch

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _delegate(
    part: str, method: Callable[Concatenate[Any, _P], _R]
) -> Callable[Concatenate[Host, _P], _R]:
    """``method`` of the host's part ``part`` as a method of the host, docstring included."""

    @functools.wraps(method)
    def delegated(self: Host, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return method(getattr(self, part), *args, **kwargs)

    return delegated


class Host:
    """The tool layer of one agent, as an async context manager: it builds its parts (the
    plugins' :mod:`~hermes_core._plugin_runtime`, :mod:`~hermes_core._mcp.hosting`, the
    :mod:`~hermes_core.search._bridge_tools`, the dispatcher) and owns their lifetimes; they get
    what they need from each other, never from the host.

    The dispatcher and the tool search are built on first use, so a host used only to load
    plugins needs no approval policy or search backend; an unknown ``approvals.policy`` or
    ``tools.tool_search.backend`` is reported, with the valid names, by the first call.

    ``config_path`` is the file ``config`` was loaded from: a file inside the working directory
    cannot enable project plugins, and relative catalog paths are read from its directory.
    ``mcp_reconnect``, ``mcp_backoff``, ``mcp_startup`` and ``mcp_progress`` say how the MCP servers
    are supervised and started (:class:`~hermes_core._mcp.hosting.McpHosting`). ``strict`` (default:
    ``HERMES_STRICT_PLUGINS``) raises the first plugin error instead of recording it.
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
        strict = env.flag(STRICT_FLAG) if strict is None else strict
        self._runtime = PluginRuntime(
            config, env, self.registry, config_path=config_path, strict=strict
        )
        self._mcp = McpHosting(
            config,
            env,
            self.registry,
            config_path=config_path,
            reconnect=mcp_reconnect,
            backoff=mcp_backoff,
            startup=mcp_startup,
            progress=mcp_progress,
        )
        self._availability = self._mcp.availability(config.tools, self._runtime.missing_tool)
        self._bridge = BridgeTools(
            self.registry,
            config.tools,
            self._availability,
            started=self._runtime.started,
            backend=self._runtime.search_backend_or_unavailable,
            connectors=self._runtime.connectors,
            unavailable=self._mcp.unavailable,
            wait_for_unknown=self._mcp.wait_for_unknown,
        )
        self._dispatcher: Dispatcher | None = None

    @classmethod
    def from_environment(cls, env: Environment) -> Host:
        """A host for the user's own configuration, ``env.config_path`` (which must exist when
        ``--config`` or ``HERMES_CONFIG`` named it)."""
        from hermes_core._config import config_in_effect

        env.check_config_file()
        return cls(config_in_effect(env), env, config_path=env.config_path)

    async def __aenter__(self) -> Host:
        self.start()
        try:
            await self._mcp.connect()
        except BaseException:
            await self._mcp.aclose()
            self.close()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            await self._runtime.close_connectors()
            await self._mcp.aclose()
        finally:
            self.close()

    def start(self) -> None:
        """Load plugins, register their tools and the configured catalogs (the dispatcher and
        the tool search are built on first use). ``async with`` does this and also connects the
        MCP servers; call ``start`` alone for what needs no event loop (listing plugins)."""
        self.load_plugins()
        try:
            base = self.config_path.parent if self.config_path is not None else self.env.cwd
            self._bridge.register_catalogs(base, self.env.cache_dir)
            self._bridge.register_tools()
            self._register_connections()
        except BaseException:
            self.close()
            raise

    load_plugins = _delegate("_runtime", PluginRuntime.load_plugins)

    def close(self) -> None:
        """Flush the activity log and unregister every plugin."""
        if self._dispatcher is not None:
            self._dispatcher.close()
        self._runtime.close()
        self._bridge.close()
        self._dispatcher = None

    @property
    def plugins(self) -> list[PluginRecord]:
        """A record per discovered plugin copy, with its status (the rows of the CLI list)."""
        return self._runtime.started().records

    @property
    def hook_directories(self) -> list[HookDirectory]:
        """A record per hook directory of ``$HERMES_HOME/hooks`` (the rows of ``hermes hooks
        list``), with its status; only the enabled ones were imported."""
        return self._runtime.hook_directories

    @property
    def warnings(self) -> list[str]:
        """What will not load or run as configured: the plugins' warnings (what discovery
        ignored and why, enabled gated plugins), then the hooks' (:attr:`hook_warnings`)."""
        return self._runtime.warnings

    @property
    def hook_warnings(self) -> list[str]:
        """The hooks' part of :attr:`warnings` (hook directories, shell hooks: what cannot run)."""
        return self._runtime.hook_warnings

    @property
    def pm(self) -> pluggy.PluginManager:
        """The pluggy plugin manager holding the loaded plugins."""
        return self._runtime.started().pm

    @property
    def registrations(self) -> Registrations:
        """The specs returned by the loaded plugins' registration hooks."""
        return self._runtime.registrations

    register = _delegate("_runtime", PluginRuntime.register)
    plugin_context = _delegate("_runtime", PluginRuntime.plugin_context)
    select_search_backend = _delegate("_runtime", PluginRuntime.select_search_backend)
    select_connector_gateway = _delegate("_runtime", PluginRuntime.select_connector_gateway)
    create_search_backend = _delegate("_runtime", PluginRuntime.create_search_backend)
    create_connector_gateway = _delegate("_runtime", PluginRuntime.create_connector_gateway)
    create_model_provider = _delegate("_runtime", PluginRuntime.create_model_provider)
    check_plugins = _delegate("_runtime", PluginRuntime.check_plugins)

    @property
    def connectors(self) -> Connectors:
        """The hosted connectors over the gateway the config selects, built on first use."""
        return self._runtime.connectors()

    def _register_connections(self) -> None:
        """``manage_connections``, always registered: its MCP actions need no sign-in."""
        from hermes_core.connectors._manage import LocalServers, manage_connections_tool

        mcp = self._mcp
        local = LocalServers(self.env, mcp.configs, mcp.status, mcp.running_adder)
        tool = manage_connections_tool(self._runtime.connectors, local)
        self.registry.register(tool, owner="connections")

    def _build_dispatcher(self) -> Dispatcher:
        from hermes_core._dispatch import Dispatcher
        from hermes_core._execution.caller import ToolCallers

        policy, policy_name = self._runtime.create_approval_policy()
        return Dispatcher(
            self.registry,
            self.pm,
            policy,
            self.config,
            self.env,
            availability=self.availability,
            callers=ToolCallers(self._runtime.passed_variables()),
            policy_name=policy_name,
        )

    @property
    def availability(self) -> Availability:
        """Why a tool name can or cannot run here: one answer for the dispatcher and the bridge."""
        self._runtime.started()
        return self._availability

    def prepare_tools(self) -> None:
        """Build the dispatcher and the tool search now rather than at the first call, so an
        unknown ``approvals.policy``, ``tools.tool_search.backend`` or (when connectors are
        configured) ``tools.connectors.gateway`` raises here, listing the valid names (what a
        command line or a server wants at start); a policy that cannot be had stops the start,
        a backend or gateway does not (:meth:`PluginRuntime.check_selected
        <hermes_core._plugin_runtime.PluginRuntime.check_selected>`)."""
        _ = self.dispatcher, self.tool_search
        self._runtime.check_selected()
        if self._runtime.strict:
            _ = self.tool_search.backend

    @property
    def dispatcher(self) -> Dispatcher:
        """The one call path (hooks, approvals, handler, activity log), built on first use."""
        self._runtime.started()
        if self._dispatcher is None:
            self._dispatcher = self._build_dispatcher()
        return self._dispatcher

    @property
    def tool_search(self) -> ToolSearch:
        """Deferral, the listing and the bridge over this host's tools, built on first use."""
        return self._bridge.tool_search

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
        """Run one tool call for ``session``; never raises. The dispatcher is the only router: a
        direct call runs its tool, ``tool_call`` plans the real calls it runs, so hooks,
        approvals and the activity log see the real tool."""
        try:
            dispatcher = self.dispatcher
        except HermesError as exc:  # a configured policy that no plugin provides
            return ToolResult.error("CONFIG_ERROR", f"hermes-core cannot run tools: {exc}")
        return await dispatcher.dispatch(name, arguments, session)

    add_mcp_server = _delegate("_mcp", McpHosting.add_server)
    remove_mcp_server = _delegate("_mcp", McpHosting.remove_server)

    @property
    def mcp(self) -> McpSupervisor | None:
        """The supervisor of this host's MCP servers (``None`` until one is configured or added)."""
        return self._mcp.supervisor

    mcp_status = _delegate("_mcp", McpHosting.status)
