"""``BridgeTools``: the three bridge tools of a host's registry and the Tool Search behind them.

``tool_search``, ``tool_describe`` and ``tool_call`` are ordinary registry tools (owner
``bridge``); their handlers live here and reach the host's
:class:`~hermes_core.search._toolsearch.ToolSearch`, which is made on the first call that needs
it (so a host that only lists plugins or runs local tools pays for no search). A search backend
that no plugin provides makes the bridge answer a ``CONFIG_ERROR`` while every other tool
works. ``tool_call`` is a router: its handler plans the real calls, made again once a starting
MCP server a call may name has connected.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_core._errors import HermesError
from hermes_core._tools import ToolResult

if TYPE_CHECKING:
    from pathlib import Path

    from hermes_core._availability import Availability
    from hermes_core._config import ToolsConfig
    from hermes_core._dispatch import CallPlan
    from hermes_core._registry import Registry
    from hermes_core._session import Session
    from hermes_core.search._backend import SearchBackend
    from hermes_core.search._remote import ConnectorSource
    from hermes_core.search._toolsearch import ToolSearch

BRIDGE_OWNER = "bridge"
"""The registry owner of the three bridge tools."""


class BridgeTools:
    """The bridge of one host over ``registry`` as ``tools_config`` enables its tools.

    ``started`` raises :class:`~hermes_core._errors.HermesError` while the host's plugins are
    not loaded; ``backend(name)`` makes the search backend ``name`` (a stand-in answering its
    failure when it cannot be made); ``connectors()`` gives the hosted connectors;
    ``unavailable()`` names the MCP servers that are not available, as
    ``{server: (tool count, reason)}``; ``wait_for_unknown()`` waits for the servers whose tools
    are not known yet, before a search or a description.
    """

    def __init__(
        self,
        registry: Registry,
        tools_config: ToolsConfig,
        availability: Availability,
        *,
        started: Callable[[], object],
        backend: Callable[[str], SearchBackend],
        connectors: Callable[[], ConnectorSource],
        unavailable: Callable[[], Mapping[str, tuple[int, str]]],
        wait_for_unknown: Callable[[], Awaitable[None]],
    ) -> None:
        self._registry = registry
        self._tools_config = tools_config
        self._availability = availability
        self._started = started
        self._backend = backend
        self._connectors = connectors
        self._unavailable = unavailable
        self._wait_for_unknown = wait_for_unknown
        self._tool_search: ToolSearch | None = None

    def register_catalogs(self, base: Path, cache_dir: Path | None) -> None:
        """Register the catalogs of ``tools.catalogs`` (relative paths resolved against
        ``base``); the catalog module is imported only when some are configured."""
        if self._tools_config.catalogs:
            from hermes_core.search._catalog import register_catalogs

            register_catalogs(self._registry, self._tools_config.catalogs, base, cache_dir)

    @property
    def tool_search(self) -> ToolSearch:
        """Deferral, the listing and the bridge over the host's tools, made on first use with
        the backend named by ``tools.tool_search.backend``."""
        self._started()
        if self._tool_search is None:
            self._tool_search = self._build_tool_search()
        return self._tool_search

    def _build_tool_search(self) -> ToolSearch:
        from hermes_core._registry import EnabledTools
        from hermes_core.search._toolsearch import ToolSearch

        name = self._tools_config.tool_search.backend
        backend = self._backend
        # The backend is made on the first search: a backend that cannot be made answers
        # tool_search with an error naming why, and every other tool keeps working.
        return ToolSearch(
            EnabledTools(self._registry, self._tools_config),
            self._tools_config.tool_search,
            lambda: backend(name),
            self._availability,
            # Not configured, the service (and its imports) is not made: None answers the same.
            connectors=self._connectors() if self._tools_config.connectors.configured else None,
            unavailable=self._unavailable,
            new_backend=lambda: backend(name),
        )

    def close(self) -> None:
        """Forget the Tool Search (a host that starts again makes a new one)."""
        self._tool_search = None

    def register_tools(self) -> None:
        """Register the three bridge tools in the registry (owner ``bridge``)."""
        from hermes_core.search._bridge import make_bridge_tools, search_description

        tools = make_bridge_tools(
            search_description("", connectors=False),
            self._search_tools,
            self._describe_tools,
            self._plan_tool_call,
        )
        for tool in tools:
            self._registry.register(tool, owner=BRIDGE_OWNER, bridge=True)

    def _tool_search_or_error(self) -> ToolSearch | ToolResult:
        try:
            return self.tool_search
        except HermesError as exc:  # a configured backend that no plugin provides
            return ToolResult.error("CONFIG_ERROR", f"hermes-core cannot search tools: {exc}")

    async def _search_tools(self, session: Session, **arguments: Any) -> ToolResult:
        search = self._tool_search_or_error()
        if isinstance(search, ToolResult):
            return search
        await self._wait_for_unknown()
        return await search.handle_search(session, **arguments)

    async def _describe_tools(self, session: Session, **arguments: Any) -> ToolResult:
        search = self._tool_search_or_error()
        if isinstance(search, ToolResult):
            return search
        await self._wait_for_unknown()
        return await search.handle_describe(session, **arguments)

    def _plan_tool_call(self, arguments: Any, session: Session) -> Any:
        search = self._tool_search_or_error()
        if isinstance(search, ToolResult):
            return search
        plan = search.plan_call(arguments, session)
        if isinstance(plan, ToolResult):
            return plan
        availability = self._availability
        refused = (call.name for call in plan.calls if call.refusal is not None)
        pending = next((n for n in refused if availability.pending_source(n)), None)
        if pending is not None:
            return self._plan_once_started(search, arguments, session, pending)
        return plan

    async def _plan_once_started(
        self, search: ToolSearch, arguments: Any, session: Session, pending: str
    ) -> CallPlan | ToolResult:
        """The plan of a ``tool_call`` that names a tool no one has yet (``pending``), made
        again once the MCP server it would be a tool of has connected (or used up its
        ``connect_timeout``)."""
        await self._availability.settle(pending)
        return search.plan_call(arguments, session)
