"""``Connectors``: the hosted connectors of one host, over the gateway its config selects.

It answers the bridge (:class:`~hermes_core.search._remote.ConnectorSource`) and
``manage_connections``. Connectors are in scope only when ``tools.connectors.enabled`` is true
AND ``tools.connectors.url`` is set AND the user is signed in (:mod:`.signin`). The gateway is
built on first use, with the token in effect, and built again after a new sign-in. Whatever the
gateway does (fails, hangs past ``search_timeout`` on a search, raises), the bridge gets an
answer, never an exception.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from hermes_core._config import ConnectorsConfig
from hermes_core._errors import HermesError
from hermes_core._mcp.manifests import capped_description, description_problem, schema_problem
from hermes_core._mcp.tools import annotations_of
from hermes_core._paths import Environment
from hermes_core._tools import HINTS_META, Tool, ToolResult
from hermes_core.connectors._call_results import (
    CONNECTION_CODES,
    SIGN_IN_HINT,
    client_failure,
    data_result,
    error_result,
    failure_result,
    failure_text,
)
from hermes_core.connectors._gateway import (
    ConnectorGateway,
    ConnectorSchema,
    ExecuteCall,
    ExecuteError,
    ExecuteResult,
    GatewayConnections,
    GatewayFailure,
    GatewayListing,
    GatewaySearch,
)
from hermes_core.connectors._naming import (
    CONNECTORS_TOOLSET,
    GatewaySlugs,
    Twin,
    gateway_slugs,
    resolve_twins,
)
from hermes_core.connectors._signin import SignIn, SignInCache, sign_in_again
from hermes_core.search._remote import (
    ConnectorDescription,
    ConnectorSearch,
    RemoteTool,
    Unavailable,
)

__all__ = ["Connectors", "Scope", "ScopeReason"]

log = logging.getLogger("hermes_core.connectors")

ScopeReason = Literal["disabled", "no_url", "signed_out"]

_CALL_TIMEOUT = 300.0
"""A connector call's handler timeout: two execute requests of 60 s each with one retry."""
_MAX_TOOLS = 256
"""Connector tools kept for the dispatcher (it compiles a tool once per object)."""
_MAX_HINTS = 4096
"""Connector tools whose hints (the gateway's annotations) are remembered from its answers."""
_HINT_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_GATEWAY = "the connector gateway"
MAX_HITS = 500
"""Gateway hits ranked per query, in the gateway's order: ranking costs per hit, and a
gateway listing hundreds of thousands of tools would keep ``tool_search`` past its budget."""


@dataclass(frozen=True)
class Scope:
    """Whether connectors are in scope, and when not, why (``reason``) in words (``message``)."""

    in_scope: bool
    reason: ScopeReason | None = None
    message: str = ""


class Connectors:
    """Scope, search, describe and calls of hosted connectors for one host.

    ``build(url, token)`` makes the gateway (the host selects it by ``tools.connectors.gateway``;
    it may raise a :class:`~hermes_core._errors.HermesError`, which is reported, not raised).
    """

    def __init__(
        self,
        config: ConnectorsConfig,
        env: Environment,
        build: Callable[[str, str], ConnectorGateway],
    ) -> None:
        self.config = config
        self._sign_ins = SignInCache(env)
        self._build = build
        self._gateway: ConnectorGateway | None = None
        self._token: str | None = None
        self._retired: list[ConnectorGateway] = []
        self._tools: dict[str, Tool] = {}
        self._hints: dict[str, dict[str, bool]] = {}
        self._warned: set[tuple[str, str]] = set()

    # Scope ------------------------------------------------------------------------------------

    def sign_in(self) -> SignIn:
        """The sign-in in effect now."""
        return self._sign_ins.current()

    def configured(self) -> bool:
        """Whether connectors are enabled and a gateway URL is set."""
        return self.config.configured

    def scope(self) -> Scope:
        """The availability rule: enabled AND a URL AND signed in."""
        if not self.config.enabled:
            return Scope(False, "disabled", "connectors are disabled (tools.connectors.enabled)")
        if not self.config.url:
            return Scope(False, "no_url", "no gateway is configured (set tools.connectors.url)")
        sign_in = self.sign_in()
        if not sign_in.signed_in:
            problem = f" ({sign_in.problem})" if sign_in.problem else ""
            return Scope(False, "signed_out", f"not signed in{problem}: {SIGN_IN_HINT}")
        return Scope(True)

    def in_scope(self) -> bool:
        """Whether connectors are enabled, configured and signed in."""
        return self.configured() and self.sign_in().signed_in

    # The gateway ------------------------------------------------------------------------------

    def gateway(self) -> ConnectorGateway:
        """The gateway for the token in effect, built on first use (and again after a new
        sign-in). Raises :class:`~hermes_core._errors.HermesError` when connectors are out of
        scope or the configured gateway cannot be built (an unknown name lists the valid
        ones)."""
        scope = self.scope()
        if not scope.in_scope:
            raise HermesError(f"hosted connectors are not available: {scope.message}")
        token = self.sign_in().token
        url = self.config.url
        assert token is not None
        assert url is not None
        if self._gateway is not None and token == self._token:
            return self._gateway
        if self._gateway is not None:
            self._retired.append(self._gateway)
            self._gateway = None
        self._gateway = self._build(url, token)
        self._token = token
        return self._gateway

    async def aclose(self) -> None:
        """Close every gateway this object built."""
        gateways = [*self._retired, *([self._gateway] if self._gateway is not None else [])]
        self._retired, self._gateway, self._token = [], None, None
        for gateway in gateways:
            try:
                await gateway.aclose()
            except Exception:
                log.warning("closing the connector gateway failed", exc_info=True)

    def _warn_once(self, what: str, detail: str) -> None:
        key = (what, detail)
        if key not in self._warned:
            self._warned.add(key)
            log.warning("%s", detail)

    # Search -----------------------------------------------------------------------------------

    async def search(self, queries: Sequence[str]) -> ConnectorSearch:
        """Every query in one gateway request, within ``search_timeout``; a gateway that is
        slow, unreachable, refuses or answers off the protocol makes ``unavailable`` say why
        (:func:`_unavailable`), and one that does not serve this account (404) answers nothing,
        silently."""
        import anyio  # not at import time: a host that never searches loads no event loop code

        try:
            gateway = self.gateway()
            with anyio.fail_after(self.config.search_timeout):
                answer: GatewaySearch = await gateway.search(list(queries))
        except TimeoutError:
            timeout = self.config.search_timeout
            message = (
                f"the connector gateway did not answer a search within {timeout:g} s "
                "(tools.connectors.search_timeout)"
            )
            log.info("%s", message)
            return ConnectorSearch(unavailable="unreachable", message=message)
        except BaseException as exc:
            if _cancelled(exc):
                raise
            message = f"connector search failed: {type(exc).__name__}: {exc}"
            self._warn_once("search", message)
            return ConnectorSearch(unavailable="error", message=message)
        if answer.failure is not None:
            if answer.failure.kind == "not_served":
                return ConnectorSearch()
            message = f"connector search failed: {answer.failure.message}"
            reason = _unavailable(answer.failure)
            if reason == "error":
                # A gateway answering off the protocol is not transient: say what is wrong.
                self._warn_once("search", message)
            else:
                log.info("%s", message)
            again = sign_in_again(self.sign_in()) if reason == "signed_out" else ""
            return ConnectorSearch(unavailable=reason, message=message, sign_in_again=again)
        answer = replace(answer, schemas=self._usable(answer.schemas))
        hits = [
            self._remote_tools(answer.results[index] if index < len(answer.results) else (), answer)
            for index in range(len(queries))
        ]
        return ConnectorSearch(hits=hits)

    def _remote_tools(self, slugs: Sequence[str], answer: GatewaySearch) -> list[RemoteTool]:
        """The hits of one query: the slugs the gateway found (the first :data:`MAX_HITS`),
        under their names, twins resolved; a slug without a schema cannot be ranked and is left
        out."""
        if len(slugs) > MAX_HITS:
            self._warn_once(
                "hits",
                f"the connector gateway found {len(slugs):,} tools for one query: the first "
                f"{MAX_HITS:,} are ranked, the others left out",
            )
            slugs = slugs[:MAX_HITS]
        found = [(answer.schemas[slug].connector, slug) for slug in slugs if slug in answer.schemas]
        named, twins = resolve_twins(found)
        self._warn_twins(twins)
        return [
            self._remote(name, connector, answer.schemas[slug])
            for name, (connector, slug) in named.items()
        ]

    def _remote(self, name: str, connector: str, schema: ConnectorSchema) -> RemoteTool:
        """``name`` as the gateway describes it, its hints remembered for its calls."""
        hints = {key: schema.annotations[key] for key in _HINT_KEYS if key in schema.annotations}
        hints = {key: value for key, value in hints.items() if isinstance(value, bool)}
        if self._hints.get(name) != hints:
            self._tools.pop(name, None)  # built with other hints
            if len(self._hints) >= _MAX_HINTS and name not in self._hints:
                self._hints.pop(next(iter(self._hints)))
            self._hints[name] = hints
        return RemoteTool(name, connector.lower(), schema.description, dict(schema.input_schema))

    def _usable(self, schemas: Mapping[str, ConnectorSchema]) -> Mapping[str, ConnectorSchema]:
        """``schemas`` without the ones hermes does not take (too deep or too large:
        :func:`~hermes_core._mcp.manifests.schema_problem`), each warned about once; such a
        tool is neither found nor described, as an MCP server's is not listed. A description
        over the cap is shortened (:func:`~hermes_core._mcp.manifests.capped_description`),
        warned about once too."""
        refused = {
            slug: problem
            for slug, schema in schemas.items()
            if (problem := schema_problem(schema.input_schema)) is not None
        }
        for slug, problem in refused.items():
            skipped = f"the connector gateway serves a tool hermes cannot use, skipped: {slug}"
            self._warn_once("schema", f"{skipped}: {problem}")
        usable = {slug: each for slug, each in schemas.items() if slug not in refused}
        for slug, each in usable.items():
            if (too_long := description_problem(each.description)) is not None:
                cut = "the connector gateway serves a tool whose description is too long"
                self._warn_once("description", f"{cut}, shortened: {slug}: {too_long}")
                usable[slug] = replace(each, description=capped_description(each.description))
        return usable

    def _warn_twins(self, twins: Sequence[Twin]) -> None:
        for twin in twins:
            self._warn_once(
                "twin",
                f"the connector gateway serves both {twin.kept} and {twin.dropped}, which are "
                f"both {twin.name}: {twin.kept} is kept, {twin.dropped} is not offered",
            )

    # Describe ---------------------------------------------------------------------------------

    async def describe(self, names: Sequence[str]) -> ConnectorDescription:
        """The schemas of ``names`` in one request (each name's prefixed and literal slugs,
        the prefixed one preferred); names the gateway does not know are ``not_found``."""
        wanted = {name: slugs for name in names if (slugs := gateway_slugs(name)) is not None}
        unknown = [name for name in names if name not in wanted]
        asked = list(dict.fromkeys(s for slugs in wanted.values() for s in _both(slugs)))
        try:
            answer = await self.gateway().schemas(asked)
        except BaseException as exc:
            if _cancelled(exc):
                raise
            return ConnectorDescription(not_found=unknown, error=f"{type(exc).__name__}: {exc}")
        if answer.failure is not None:
            if answer.failure.kind == "not_served":
                return ConnectorDescription(not_found=list(names))
            return ConnectorDescription(
                not_found=unknown, error=failure_text(answer.failure, "describe", self.sign_in())
            )
        tools: dict[str, RemoteTool] = {}
        usable = self._usable(answer.schemas)
        for name, slugs in wanted.items():
            schema = _schema_of(usable, slugs)
            if schema is not None:
                tools[name] = self._remote(name, slugs.connector, schema)
        return ConnectorDescription(tools, [name for name in names if name not in tools])

    # Calls ------------------------------------------------------------------------------------

    def tool(self, name: str) -> Tool:
        """The tool that runs the connector tool ``name`` through the gateway: the dispatcher
        runs it like any tool (hooks may rewrite the arguments sent). Its annotations are the
        hints the gateway stated for it in the last search or description that found it, MCP's
        defaults for the others (destructive, open world), so approval treats a read-only tool
        as a read and asks for the rest; ``meta["hints"]`` says which were stated."""
        tool = self._tools.get(name)
        if tool is not None:
            return tool
        parts = gateway_slugs(name)
        connector = parts.connector if parts is not None else ""
        seen = name in self._hints
        hints = self._hints.get(name, {})

        async def run(**arguments: Any) -> ToolResult:
            return await self.execute(name, arguments)

        tool = Tool(
            name=name,
            description=f"The tool {name} of the hosted {connector} connector.",
            handler=run,
            toolset=CONNECTORS_TOOLSET,
            source="connectors",
            source_name=connector,
            annotations=annotations_of(hints),
            timeout=_CALL_TIMEOUT,
            meta={HINTS_META: {"by": _GATEWAY, "stated": sorted(hints), "seen": seen}},
        )
        if len(self._tools) >= _MAX_TOOLS:
            self._tools.pop(next(iter(self._tools)))
        self._tools[name] = tool
        return tool

    async def execute(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Run ``name`` with ``arguments``: the prefixed slug, and the literal one only when the
        gateway answered ``TOOL_NOT_FOUND``; every failure an error result."""
        slugs = gateway_slugs(name)
        if slugs is None:
            return ToolResult.error("UNKNOWN_TOOL", f"{name!r} is not a connector tool name.")
        try:
            gateway = self.gateway()
        except HermesError as exc:
            return ToolResult.error("NOT_AVAILABLE", f"{name} was not run: {exc}")
        outcome = await self._execute_one(gateway, slugs.connector, slugs.prefixed, arguments)
        if isinstance(outcome, ExecuteResult) and _code(outcome) == "TOOL_NOT_FOUND":
            outcome = await self._execute_one(gateway, slugs.connector, slugs.literal, arguments)
        if isinstance(outcome, GatewayFailure):
            return failure_result(name, outcome, self.sign_in())
        if outcome.error is not None:
            return await self._error_result(slugs.connector, outcome.error)
        return data_result(outcome.data, self.config.max_result_chars)

    async def _execute_one(
        self,
        gateway: ConnectorGateway,
        connector: str,
        slug: str,
        arguments: Mapping[str, Any],
    ) -> ExecuteResult | GatewayFailure:
        try:
            answer = await gateway.execute([ExecuteCall(connector, slug, dict(arguments))])
        except BaseException as exc:
            if _cancelled(exc):
                raise
            return client_failure(exc)
        if answer.failure is not None:
            return answer.failure
        if not answer.results:
            return GatewayFailure("error", "the gateway answered no result for the call")
        return answer.results[0]

    async def _error_result(self, connector: str, error: ExecuteError) -> ToolResult:
        link = None
        if error.code in CONNECTION_CODES:
            link = error.connect_url or await self._connect_link(connector, error.code)
        return error_result(connector, error, link)

    async def _connect_link(self, connector: str, code: str) -> str | None:
        """A link that connects ``connector``, asked of the gateway when its error gave none."""
        answer = await self.connect([connector], reinitiate=code == "CONNECTION_EXPIRED")
        for link in answer.results:
            if link.connector == connector and link.connect_url:
                return link.connect_url
        return None

    # Connections ------------------------------------------------------------------------------

    async def connect(self, connectors: Sequence[str], *, reinitiate: bool) -> GatewayConnections:
        """Ask the gateway for authorization of ``connectors`` (never retried)."""
        try:
            return await self.gateway().connect(list(connectors), reinitiate)
        except BaseException as exc:
            if _cancelled(exc):
                raise
            return GatewayConnections(failure=client_failure(exc))

    async def states(self) -> GatewayListing:
        """The account's connectors and their connection state."""
        try:
            return await self.gateway().list_connectors()
        except BaseException as exc:
            if _cancelled(exc):
                raise
            return GatewayListing(failure=client_failure(exc))


def _cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is the caller's cancellation (to re-raise), not a failure to report."""
    from hermes_core._timeouts import caller_cancelled  # it loads asyncio: only on this path

    return caller_cancelled(exc)


def _unavailable(failure: GatewayFailure) -> Unavailable:
    """Why a search is unavailable: the failure's kind (``unreachable`` only for a gateway that
    could not be reached); a 404 (``not_served``) is silent and never gets here."""
    if failure.kind == "not_served":
        return "error"
    return failure.kind


def _both(slugs: GatewaySlugs) -> tuple[str, str]:
    return slugs.prefixed, slugs.literal


def _schema_of(
    schemas: Mapping[str, ConnectorSchema], slugs: GatewaySlugs
) -> ConnectorSchema | None:
    for slug in _both(slugs):
        schema = schemas.get(slug)
        if schema is not None and schema.connector.lower() == slugs.connector:
            return schema
    return None


def _code(result: ExecuteResult) -> str | None:
    return result.error.code if result.error is not None else None
