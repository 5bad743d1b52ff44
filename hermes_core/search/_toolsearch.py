"""Tool Search, assembled: the tool array per request and the three bridge tools behind it.

:class:`ToolSearch` reads a live :class:`~hermes_core.search._assembly.LiveTools`, keeps the
search backend in sync with its deferred tools, and answers ``tool_search``, ``tool_describe`` and
``tool_call``. It never runs a tool itself: ``tool_call`` is a router, whose handler plans the
real calls (a :class:`~hermes_core._dispatch.CallPlan`) that the dispatcher then runs under their
real names; the dispatcher coerces and validates the arguments.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any

from hermes_core._availability import Availability, describe_guesses
from hermes_core._config import ToolSearchConfig
from hermes_core._connector_names import CONNECTORS_TOOLSET, split_connector_name
from hermes_core._dispatch import CallPlan
from hermes_core._generation_cache import GenerationCache
from hermes_core._session import Session
from hermes_core._shown import PROBLEM_CHARACTERS, clipped
from hermes_core._tools import BRIDGE_TOOL_NAMES, Tool, ToolResult
from hermes_core.search._assembly import (
    Assembly,
    EitherNames,
    LiveTools,
    ToolSplit,
    assemble_tools,
    listing_budget,
    split_tools,
)
from hermes_core.search._backend import SearchBackend, SearchHit, ToolDocument
from hermes_core.search._bridge import (
    BridgeArgumentError,
    bridge_result,
    connectors_unavailable_hint,
    empty_match_hint,
    loop_breaker,
    make_bridge_tools,
    parse_limit,
    parse_names,
    parse_queries,
    refusal,
    search_description,
    search_entry,
    unmatched_hint,
)
from hermes_core.search._bridge_arguments import sent_argument
from hermes_core.search._call_plans import plan_tool_call
from hermes_core.search._indexing import IndexSync
from hermes_core.search._listing import group_of
from hermes_core.search._remote import ConnectorSearch, ConnectorSource, RemoteTool
from hermes_core.search._render import tool_tokens

logger = logging.getLogger(__name__)

__all__ = ["ToolSearch"]

_MAX_GRANT_INDEXES = 16
"""Search indexes kept for restricted grants; each holds only its grant's deferred tools."""

_MAX_CACHED_ASSEMBLIES = 64
"""Distinct (budget, grant, ...) keys kept per generation; a host serving many grants stays
bounded."""


def _nothing_unavailable() -> Mapping[str, tuple[int, str]]:
    return {}


class ToolSearch:
    """Deferral, assembly and the bridge over the live tools.

    ``backend`` is the search backend, or a function that makes one (called on the first search:
    a backend that cannot be made makes ``tool_search`` answer an error naming why, while every
    other tool keeps working). ``availability`` says why a ``tool_call`` entry cannot run.
    ``unavailable`` reports configured servers that are not available, as
    ``{server: (tool count, reason)}``; they are named in the listing.
    """

    def __init__(
        self,
        live_tools: LiveTools,
        config: ToolSearchConfig,
        backend: SearchBackend | Callable[[], SearchBackend],
        availability: Availability,
        *,
        connectors: ConnectorSource | None = None,
        unavailable: Callable[[], Mapping[str, tuple[int, str]]] = _nothing_unavailable,
        new_backend: Callable[[], SearchBackend] | None = None,
    ) -> None:
        self.live_tools = live_tools
        self.config = config
        self.availability = availability
        self.connectors = connectors
        self._unavailable = unavailable
        self._view: GenerationCache[None, ToolSplit] = GenerationCache(live_tools)
        self._make_backend: Callable[[], SearchBackend] | None = None
        self._index: IndexSync | None = None
        if isinstance(backend, SearchBackend):
            self._index = IndexSync(backend)
        else:
            self._make_backend = backend
        self._new_backend = new_backend
        self._grant_indexes: dict[frozenset[str], IndexSync] = {}
        self._assemblies: GenerationCache[tuple[Any, ...], Assembly] = GenerationCache(
            live_tools, limit=_MAX_CACHED_ASSEMBLIES
        )
        self._schema_tokens: dict[str, tuple[Tool, int]] = {}
        self._searches: weakref.WeakKeyDictionary[Session, tuple[int, int]] = (
            weakref.WeakKeyDictionary()
        )
        """Per session, the turn and how many searches it made in that turn (the loop
        breaker's count)."""

    @property
    def backend(self) -> SearchBackend:
        """The search backend (made on first use when a factory was given; raises its
        error)."""
        return self._shared_index().backend

    def _shared_index(self) -> IndexSync:
        if self._index is None:
            assert self._make_backend is not None
            self._index = IndexSync(self._make_backend())
        return self._index

    # Catalog state ----------------------------------------------------------------------------

    def view(self) -> ToolSplit:
        """The live tools split into visible and deferred tools, recomputed when it changed."""
        view = self._view.get(None)
        if view is None:
            generation = self.live_tools.generation
            view = split_tools(self.live_tools.tools(), self.config, generation)
            self._view.put(None, view)
        return view

    def _connectors_in_scope(self, session: Session | None) -> bool:
        if self.connectors is None or not self.connectors.in_scope():
            return False
        return session is None or session.grants(CONNECTORS_TOOLSET)

    def _connectors_route(self) -> bool | None:
        """What a ``tool_call`` entry may expect of connectors: ``None`` when none are
        configured (or they are disabled), else whether they are in scope."""
        if self.connectors is None or not self.connectors.configured():
            return None
        return self.connectors.in_scope()

    def _tokens_of(self, tool: Tool) -> int:
        cached = self._schema_tokens.get(tool.name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        tokens = tool_tokens(tool)
        if tool.name not in BRIDGE_TOOL_NAMES:  # bridge descriptions change with the listing
            self._schema_tokens[tool.name] = (tool, tokens)
        return tokens

    # Assembly -------------------------------------------------------------------------------------

    def assemble(
        self,
        context_length: int | None = None,
        session: Session | None = None,
        tools_in: Sequence[Tool] | None = None,
    ) -> Assembly:
        """The tool array for one model request, with its statistics.

        Cached by registry generation, budget, grant and the unavailable servers, so repeating
        it on an unchanged set of tools costs a dictionary lookup. ``tools_in`` assembles from those
        tools instead of the live tools (bridge tools in it are stripped first; not cached).
        """
        budget = listing_budget(self.config, context_length)
        unavailable = self._unavailable()
        connectors = self._connectors_in_scope(session)
        if tools_in is not None:
            view = split_tools(tools_in, self.config, -1)
            return self._build(view, budget, session, connectors, unavailable)
        view = self.view()
        grant = None if session is None else session.granted_toolsets
        key = (budget, grant, connectors, tuple(sorted(unavailable.items())))
        assembly = self._assemblies.get(key)
        if assembly is None:
            assembly = self._assemblies.put(
                key, self._build(view, budget, session, connectors, unavailable)
            )
        return assembly

    def _build(
        self,
        view: ToolSplit,
        budget: int,
        session: Session | None,
        connectors: bool,
        unavailable: Mapping[str, tuple[int, str]],
    ) -> Assembly:
        visible, deferred = view.in_grant(session)
        return assemble_tools(
            visible,
            deferred,
            config=self.config,
            budget_tokens=budget,
            connectors_in_scope=connectors,
            unavailable=unavailable,
            make_bridge=lambda listing: self._bridge(listing, connectors=connectors),
            schema_tokens=self._tokens_of,
        )

    def _bridge(self, listing: str, *, connectors: bool) -> list[Tool]:
        return make_bridge_tools(
            search_description(listing, connectors=connectors),
            self.handle_search,
            self.handle_describe,
            self.plan_call,
            connectors=connectors,
        )

    def bridge_tools(self) -> list[Tool]:
        """The three bridge tools as the registry holds them (the listing is rendered into
        ``tool_search``'s description at each assembly; the dispatcher runs these)."""
        return self._bridge("", connectors=self._connectors_in_scope(None))

    async def handle_search(self, session: Session, **arguments: Any) -> ToolResult:
        """``tool_search``'s handler: :meth:`search` as a result."""
        return bridge_result(
            await self.search(sent_argument(arguments, "queries"), arguments.get("limit"), session)
        )

    async def handle_describe(self, session: Session, **arguments: Any) -> ToolResult:
        """``tool_describe``'s handler: :meth:`describe` as a result."""
        return bridge_result(await self.describe(sent_argument(arguments, "names"), session))

    # tool_search ----------------------------------------------------------------------------------

    async def search(self, queries: Any, limit: Any, session: Session) -> dict[str, Any]:
        """What ``tool_search`` returns for ``queries`` (a list or one string)."""
        try:
            query_list = parse_queries(queries)
            per_query = parse_limit(
                limit, self.config.search_default_limit, self.config.max_search_limit
            )
        except BridgeArgumentError as exc:
            return refusal(str(exc))  # a refused call searched nothing: it does not count
        stop = loop_breaker(self._count_search(session), self.config.max_searches_per_turn)
        if stop is not None:
            return stop
        view = self.view()
        granted = view.grant(session)
        deferred = granted.deferred
        allowed = granted.deferred_by_name
        try:
            searched = self._index_for(session)
        except Exception as exc:  # a backend that cannot be made: every other tool still works
            return refusal(
                f"the search backend {self.config.backend!r} is not available: {exc}",
                code="CONFIG_ERROR",
            )
        shared = searched is self._index
        searched.sync(view.deferred if shared else deferred, view.generation)
        # The shared index holds tools outside the grant: ask for enough hits to fill the limit.
        hidden = len(view.deferred) - len(deferred) if shared else 0
        remote = ConnectorSearch()
        if self._connectors_in_scope(session) and self.connectors is not None:
            remote = await self.connectors.search(query_list)
        results: list[dict[str, Any]] = []
        tools: dict[str, dict[str, Any]] = {}
        for index, query in enumerate(query_list):
            remote_hits = list(remote.hits[index]) if index < len(remote.hits) else []
            by_name = {hit.name: hit for hit in remote_hits}
            try:
                hits, unmatched, absent = self._rank(
                    searched.backend,
                    query,
                    per_query + hidden,
                    remote_hits,
                    keep=EitherNames(allowed, by_name),
                    wanted=per_query,
                )
            except Exception as exc:  # a plugin backend must not crash the turn
                return refusal(
                    f"the search backend {self.config.backend!r} failed: {exc}", code="TOOL_ERROR"
                )
            matches = [hit.name for hit in hits]
            result: dict[str, Any] = {"query": query, "matches": matches, "unmatched": unmatched}
            unavailable = remote.unavailable is not None
            hints = (
                [unmatched_hint(unmatched, absent, connectors_unavailable=unavailable, query=query)]
                if unmatched
                else []
            )
            if not matches:
                result["available_sources"] = [
                    {"name": name, "tool_count": count} for name, count in granted.sources
                ]
                hints.insert(0, empty_match_hint(query))
            if hints:
                result["hint"] = " ".join(hints)
            results.append(result)
            for name in matches:
                if name in tools:
                    continue
                if name in allowed:
                    tool = allowed[name]
                    tools[name] = search_entry(
                        tool.source, group_of(tool), tool.description, tool.parameters
                    )
                else:
                    hit = by_name[name]
                    tools[name] = search_entry(
                        "connectors", hit.connector, hit.description, hit.parameters
                    )
        answer: dict[str, Any] = {
            "queries": query_list,
            "total_available": len(deferred),
            "results": results,
            "tools": tools,
        }
        if remote.unavailable is not None:
            answer["connectors"] = {"status": "unavailable", "reason": remote.unavailable}
            if remote.message:
                answer["connectors"]["message"] = clipped(remote.message, PROBLEM_CHARACTERS)
            answer["hint"] = connectors_unavailable_hint(remote.unavailable, remote.sign_in_again)
        return answer

    def _count_search(self, session: Session) -> int:
        """Count one ``tool_search`` call of ``session`` in its current turn; the count."""
        turn, count = self._searches.get(session, (session.turn, 0))
        count = count + 1 if turn == session.turn else 1
        self._searches[session] = (session.turn, count)
        return count

    def _index_for(self, session: Session) -> IndexSync:
        """The index a session searches: its own for a restricted grant (so tools it cannot see
        shape neither admission nor scores), when a backend factory was given; else the shared
        one. Grant indexes are few and bounded; the least recently used is dropped."""
        grant = session.granted_toolsets
        if grant is None or self._new_backend is None:
            return self._shared_index()
        index = self._grant_indexes.pop(grant, None)
        if index is None:
            index = IndexSync(self._new_backend())
            while len(self._grant_indexes) >= _MAX_GRANT_INDEXES:
                self._grant_indexes.pop(next(iter(self._grant_indexes)))
        self._grant_indexes[grant] = index  # most recently used last
        return index

    def _rank(
        self,
        backend: SearchBackend,
        query: str,
        limit: int,
        remote: Sequence[RemoteTool],
        *,
        keep: Container[str],
        wanted: int,
    ) -> tuple[list[SearchHit], list[str], set[str]]:
        """The first ``wanted`` of ``limit`` hits for ``query`` whose names are in ``keep``, the
        query's words that none of them answers, and of those the ones no tool holds."""
        extra = [
            ToolDocument.from_schema(hit.name, hit.description, hit.connector, hit.parameters)
            for hit in remote
        ]
        found = backend.search(query, limit, self.config.admission, extra)
        hits = [hit for hit in found if hit.name in keep][:wanted]
        unmatched = list(backend.unmatched_words(query, hits, extra))
        if any(hit.name.lower() == query.strip().lower() for hit in hits):
            unmatched = []  # the query is a tool's name (its case, its words split aside)
        elif any(hit.name.startswith("mcp__") for hit in hits):
            # A backend may index names without their mcp__<server>__ prefix: "mcp" (a name or
            # a prefix copied from the listing) would be a word "no tool holds".
            unmatched = [word for word in unmatched if word.lower() != "mcp"]
        if not unmatched or not hits:
            return hits, unmatched, set(unmatched)
        return hits, unmatched, set(backend.unmatched_words(query, [], extra))

    # tool_describe --------------------------------------------------------------------------------

    async def describe(self, names: Any, session: Session) -> dict[str, Any]:
        """What ``tool_describe`` returns for ``names`` (a list or one string)."""
        try:
            name_list = parse_names(names)
        except BridgeArgumentError as exc:
            return refusal(str(exc))
        view = self.view()
        described: dict[str, dict[str, Any]] = {}
        not_found: list[str] = []
        errors: dict[str, str] = {}
        remote: list[str] = []
        for name in name_list:
            if name in BRIDGE_TOOL_NAMES:
                errors[name] = "a bridge tool: its schema is in your tool list; call it directly"
                continue
            tool = self.live_tools.get(name)
            if tool is not None and session.grants(tool.toolset):
                if name in view.visible_names:
                    errors[name] = "in your tool list: call it directly"
                    continue
                if name in view.deferred_by_name:
                    described[name] = {
                        "description": tool.description,
                        "parameters": dict(tool.parameters),
                    }
                    continue
            if tool is None and split_connector_name(name) and self._connectors_in_scope(session):
                remote.append(name)
                continue
            not_found.append(name)
        if remote and self.connectors is not None:
            answer = await self.connectors.describe(remote)
            for name in remote:
                found = answer.tools.get(name)
                if found is not None:
                    described[name] = {
                        "description": found.description,
                        "parameters": dict(found.parameters),
                    }
                elif answer.error is not None and name not in answer.not_found:
                    errors[name] = answer.error
                else:
                    not_found.append(name)
        ordered = {name: described[name] for name in name_list if name in described}
        missing = self.availability.missing  # a plugin's tool: that plugin says why
        errors.update({n: why for n in not_found if missing and (why := missing(n))})
        not_found = [name for name in not_found if name not in errors]
        guesses, ambiguous = describe_guesses(not_found, view.grant(session).deferred_by_name)
        errors.update(ambiguous)
        not_found = [name for name in not_found if name not in errors]
        result: dict[str, Any] = {"tools": ordered, "not_found": not_found, "errors": errors}
        result["did_you_mean"] = guesses  # a name sent without its prefix: the one to send
        return {key: value for key, value in result.items() if value}

    # tool_call ------------------------------------------------------------------------------------

    def plan_call(self, arguments: Any, session: Session) -> CallPlan | ToolResult:
        """What ``tool_call`` asks: one entry, or a batch of connector tools; each entry checked
        (:class:`~hermes_core._availability.Availability`, through the bridge) and its arguments
        read, for the dispatcher to run (:mod:`~hermes_core.search._call_plans`). A refused call
        is a result at once."""
        return plan_tool_call(
            arguments,
            session,
            self.view,
            self.availability,
            self.connectors,
            self._connectors_route,
        )
