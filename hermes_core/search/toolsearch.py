"""Tool Search, assembled: the tool array per request and the three bridge tools behind it.

:class:`ToolSearch` reads a live :class:`~hermes_core.search.assembly.ToolCatalog`, keeps the
search backend in sync with its deferred tools, and answers ``tool_search``, ``tool_describe`` and
``tool_call``. It never runs a tool itself: ``tool_call`` hands every real call to the dispatcher
under the real tool name; the dispatcher coerces and validates the arguments.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

from hermes_core.config import ToolSearchConfig
from hermes_core.search.assembly import (
    Assembly,
    CatalogView,
    ToolCatalog,
    assemble_tools,
    listing_budget,
    split_catalog,
)
from hermes_core.search.backend import SearchBackend, SearchHit, ToolDocument
from hermes_core.search.bridge import (
    BridgeArgumentError,
    CallEntry,
    batch_rule,
    bridge_result,
    empty_match_hint,
    loop_breaker,
    make_bridge_tools,
    name_refusal,
    parse_calls,
    parse_entry_arguments,
    parse_limit,
    parse_names,
    parse_queries,
    refusal,
    search_description,
    search_entry,
    unmatched_hint,
)
from hermes_core.search.indexing import IndexSync
from hermes_core.search.listing import group_of
from hermes_core.search.remote import (
    CONNECTORS_TOOLSET,
    ConnectorSearch,
    ConnectorSource,
    RemoteTool,
    split_connector_name,
)
from hermes_core.search.render import compact_json, estimate_tokens, render_tool
from hermes_core.session import Session
from hermes_core.timeouts import caller_cancelled
from hermes_core.tools import BRIDGE_TOOL_NAMES, Tool, ToolResult

logger = logging.getLogger(__name__)

__all__ = ["DispatchFn", "ToolSearch"]

DispatchFn = Callable[[str, dict[str, Any], Session], Awaitable[ToolResult]]
"""The dispatcher's entry point: run the real tool ``name`` with ``arguments`` for a session."""

_CONNECTORS_UNAVAILABLE_HINT = (
    "Hosted app connectors could not be searched just now; do not conclude that an app is "
    "missing: retry later or tell the user."
)


_MAX_GRANT_INDEXES = 16
"""Search indexes kept for restricted grants; each holds only its grant's deferred tools."""

_MAX_CACHED_ASSEMBLIES = 64
"""Distinct (budget, grant, ...) keys kept per generation; a host serving many grants stays
bounded."""


def _nothing_unavailable() -> Mapping[str, tuple[int, str]]:
    return {}


class ToolSearch:
    """Deferral, assembly and the bridge over one tool catalog.

    ``unavailable`` reports configured servers that are not available, as
    ``{server: (tool count, reason)}``; they are named in the listing. ``explain_unknown``
    says why a name that is not in the catalog cannot be called (an MCP tool filtered out by
    ``include``/``exclude``, or one of an unavailable server), or ``None`` to answer with the
    usual "unknown tool".
    """

    def __init__(
        self,
        catalog: ToolCatalog,
        config: ToolSearchConfig,
        backend: SearchBackend,
        dispatch: DispatchFn,
        *,
        connectors: ConnectorSource | None = None,
        unavailable: Callable[[], Mapping[str, tuple[int, str]]] = _nothing_unavailable,
        explain_unknown: Callable[[str], str | None] | None = None,
        new_backend: Callable[[], SearchBackend] | None = None,
    ) -> None:
        self.catalog = catalog
        self.config = config
        self.backend = backend
        self._dispatch = dispatch
        self.connectors = connectors
        self._unavailable = unavailable
        self._explain_unknown = explain_unknown
        self._view: CatalogView | None = None
        self._index = IndexSync(backend)
        self._new_backend = new_backend
        self._grant_indexes: dict[frozenset[str], IndexSync] = {}
        self._assemblies: dict[tuple[Any, ...], Assembly] = {}
        self._assembly_generation: int | None = None
        self._schema_tokens: dict[str, tuple[Tool, int]] = {}
        self._last: Assembly | None = None

    # Catalog state ----------------------------------------------------------------------------

    def view(self) -> CatalogView:
        """The catalog split into visible and deferred tools, recomputed when it changed."""
        generation = self.catalog.generation
        if self._view is None or self._view.generation != generation:
            self._view = split_catalog(self.catalog.tools(), self.config, generation)
        return self._view

    def _connectors_in_scope(self, session: Session | None) -> bool:
        if self.connectors is None or not self.connectors.in_scope():
            return False
        return session is None or session.grants(CONNECTORS_TOOLSET)

    def _tokens_of(self, tool: Tool) -> int:
        cached = self._schema_tokens.get(tool.name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        tokens = estimate_tokens(compact_json(render_tool(tool)))
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
        it on an unchanged catalog costs a dictionary lookup. ``tools_in`` assembles from those
        tools instead of the catalog (bridge tools in it are stripped first; not cached).
        """
        budget = listing_budget(self.config, context_length)
        unavailable = self._unavailable()
        connectors = self._connectors_in_scope(session)
        if tools_in is not None:
            view = split_catalog(tools_in, self.config, -1)
            return self._build(view, budget, session, connectors, unavailable)
        view = self.view()
        grant = None if session is None else session.granted_toolsets
        key = (budget, grant, connectors, tuple(sorted(unavailable.items())))
        if self._assembly_generation != view.generation:
            self._assemblies.clear()
            self._assembly_generation = view.generation
        assembly = self._assemblies.get(key)
        if assembly is None:
            assembly = self._build(view, budget, session, connectors, unavailable)
            if len(self._assemblies) >= _MAX_CACHED_ASSEMBLIES:
                self._assemblies.clear()
            self._assemblies[key] = assembly
        self._last = assembly
        return assembly

    def _build(
        self,
        view: CatalogView,
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
            self._search_handler,
            self._describe_handler,
            self._call_handler,
            connectors=connectors,
        )

    def bridge_tools(self) -> list[Tool]:
        """The three bridge tools of the latest assembly (with its listing), or of a default
        assembly when there was none."""
        assembly = self._last or self.assemble()
        bridge = [tool for tool in assembly.tools if tool.name in BRIDGE_TOOL_NAMES]
        if bridge:
            return bridge
        return self._bridge("", connectors=self._connectors_in_scope(None))

    async def _search_handler(self, session: Session, **arguments: Any) -> ToolResult:
        return bridge_result(
            await self.search(arguments.get("queries"), arguments.get("limit"), session)
        )

    async def _describe_handler(self, session: Session, **arguments: Any) -> ToolResult:
        return bridge_result(await self.describe(arguments.get("names"), session))

    async def _call_handler(self, session: Session, **arguments: Any) -> ToolResult:
        return await self.call(arguments, session)

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
        stop = loop_breaker(session, self.config.max_searches_per_turn)
        if stop is not None:
            return stop
        view = self.view()
        granted = view.grant(session)
        deferred = granted.deferred
        allowed = granted.deferred_by_name
        searched = self._index_for(session)
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
                hits, unmatched = self._rank(
                    searched.backend,
                    query,
                    per_query + hidden,
                    remote_hits,
                    keep=allowed.keys() | by_name.keys(),
                    wanted=per_query,
                )
            except Exception as exc:  # a plugin backend must not crash the turn
                return refusal(
                    f"the search backend {self.config.backend!r} failed: {exc}", code="TOOL_ERROR"
                )
            matches = [hit.name for hit in hits]
            result: dict[str, Any] = {"query": query, "matches": matches, "unmatched": unmatched}
            hints = [unmatched_hint(unmatched)] if unmatched else []
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
            answer["hint"] = _CONNECTORS_UNAVAILABLE_HINT
        return answer

    def _index_for(self, session: Session) -> IndexSync:
        """The index a session searches: its own for a restricted grant (so tools it cannot see
        shape neither admission nor scores), when a backend factory was given; else the shared
        one. Grant indexes are few and bounded; the least recently used is dropped."""
        grant = session.granted_toolsets
        if grant is None or self._new_backend is None:
            return self._index
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
        keep: Collection[str],
        wanted: int,
    ) -> tuple[list[SearchHit], list[str]]:
        """The first ``wanted`` of ``limit`` hits for ``query`` whose names are in ``keep``, and
        the query's words that none of them answers."""
        extra = [
            ToolDocument.from_schema(hit.name, hit.description, hit.connector, hit.parameters)
            for hit in remote
        ]
        found = backend.search(query, limit, self.config.admission, extra)
        hits = [hit for hit in found if hit.name in keep][:wanted]
        return hits, list(backend.unmatched_words(query, hits, extra))

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
            tool = self.catalog.get(name)
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
        result: dict[str, Any] = {"tools": ordered, "not_found": not_found, "errors": errors}
        return {key: value for key, value in result.items() if value}

    # tool_call ------------------------------------------------------------------------------------

    async def call(self, payload: Mapping[str, Any], session: Session) -> ToolResult:
        """Run what ``tool_call`` asks: one tool, or a batch of connector tools. Never raises
        (except when the caller is cancelled): whatever goes wrong is an error result."""
        try:
            return await self._call(payload, session)
        except BaseException as exc:
            if caller_cancelled(exc):
                raise
            logger.exception("tool_call failed")
            return bridge_result(
                refusal(
                    f"tool_call failed inside hermes-core: {type(exc).__name__}: {exc}",
                    code="INTERNAL_ERROR",
                )
            )

    async def _call(self, payload: Mapping[str, Any], session: Session) -> ToolResult:
        try:
            entries = parse_calls(payload)
        except BridgeArgumentError as exc:
            return bridge_result(refusal(str(exc)))
        refused = batch_rule(entries)
        if refused is not None:
            return bridge_result(refused)
        if len(entries) == 1:
            return await self._call_one(entries[0], session)
        return bridge_result(await self._call_batch(entries, session))

    def _refuse_name(self, name: str, session: Session) -> dict[str, Any] | None:
        """Why ``name`` may not run through the bridge for ``session``, or ``None``."""
        view = self.view()
        if name in BRIDGE_TOOL_NAMES:
            return name_refusal(name, bridge=True)
        tool = self.catalog.get(name)
        if tool is not None:
            if not session.grants(tool.toolset):
                return name_refusal(name, outside_grant=True)
            if name in view.visible_names:
                return name_refusal(name, visible=True)
            if name in view.deferred_by_name:
                return None
        if split_connector_name(name) is not None and self.connectors is not None:
            if not self.connectors.in_scope():
                return refusal(
                    f"{name!r} is a connector tool, and connectors are not available (not "
                    "configured or not signed in)",
                    code="NOT_AVAILABLE",
                )
            if not session.grants(CONNECTORS_TOOLSET):
                return name_refusal(name, outside_grant=True)
            return None
        if self._explain_unknown is not None:
            reason = self._explain_unknown(name)
            if reason is not None:
                return refusal(reason, code="NOT_AVAILABLE")
        _, deferred = view.in_grant(session)
        return name_refusal(name, deferred=[tool.name for tool in deferred])

    async def _call_one(self, entry: CallEntry, session: Session) -> ToolResult:
        refused = self._refuse_name(entry.name, session)
        if refused is not None:
            return bridge_result(refused)
        try:
            arguments = parse_entry_arguments(entry.arguments)
        except BridgeArgumentError as exc:
            return bridge_result(refusal(str(exc)))
        # Coercion and validation happen in the dispatcher, the one place for every call.
        return await self._run(entry.name, arguments, session)

    async def _run(self, name: str, arguments: dict[str, Any], session: Session) -> ToolResult:
        try:
            return await self._dispatch(name, arguments, session)
        except BaseException as exc:  # the bridge answers with results, never raises
            if caller_cancelled(exc):
                raise
            return bridge_result(refusal(f"{name!r} failed: {exc}", code="TOOL_ERROR"))

    async def _call_batch(self, entries: Sequence[CallEntry], session: Session) -> dict[str, Any]:
        """Connector entries one at a time, in input order, each through the dispatcher; once
        the session is interrupted, entries not yet started are ``INTERRUPTED``."""
        results: list[dict[str, Any]] = []
        for index, entry in enumerate(entries):
            item: dict[str, Any] = {"index": index, "name": entry.name}
            if session.interrupted:
                item["error"] = {
                    "code": "INTERRUPTED",
                    "message": "not run: the user stopped this turn before it started",
                }
                results.append(item)
                continue
            refused = self._refuse_name(entry.name, session)
            if refused is None:
                try:
                    arguments = parse_entry_arguments(entry.arguments, f"calls[{index}].arguments")
                except BridgeArgumentError as exc:
                    refused = refusal(str(exc))
            if refused is not None:
                item["error"] = {"code": refused["code"], "message": refused["error"]}
            else:
                outcome = await self._run(entry.name, arguments, session)
                item.update(_batch_outcome(outcome))
            results.append(item)
        errors = sum(1 for item in results if "error" in item)
        return {
            "results": results,
            "success_count": len(results) - errors,
            "error_count": errors,
            "total_count": len(results),
        }


def _batch_outcome(result: ToolResult) -> dict[str, Any]:
    if result.is_error:
        error: dict[str, Any] = {
            "code": result.error_code or "TOOL_ERROR",
            "message": result.error_message or result.text_content,
        }
        if isinstance(result.structured, Mapping):
            extra = {k: v for k, v in result.structured.items() if k not in ("code", "message")}
            error.update(extra)
        return {"error": error}
    response = result.structured if result.structured is not None else result.text_content
    return {"response": response}
