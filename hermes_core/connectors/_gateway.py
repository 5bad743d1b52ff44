"""The connector gateway protocol: what a gateway plugin implements.

A gateway plugin registers a :class:`~hermes_core._specs.ConnectorGatewaySpec` through
``hermes_connector_gateways``; ``tools.connectors.gateway`` selects it by name (default
``http``, the bundled client of the HTTP protocol in ``spec/connectors.md``). Its factory is
called with a :class:`~hermes_core._specs.GatewayContext` (the gateway URL and the signed-in
user's token besides the usual :class:`~hermes_core._specs.PluginContext`, defined beside the
spec) and returns a :class:`ConnectorGateway`: five coroutine methods, one per route of the
protocol, and ``aclose``. This contract imports nothing of the plugin layer.

The methods speak gateway slugs (``GMAIL_SEND_EMAIL``), never model-facing names: naming, the
literal-slug retry, twins, ranking, batches and approvals are hermes-core's. A method never
raises for a failure of the gateway: it answers with ``failure`` set (a
:class:`GatewayFailure`), and hermes-core turns that into what the model sees. Results are
matched to requests by position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "ConnectionLink",
    "ConnectorGateway",
    "ConnectorSchema",
    "ConnectorState",
    "ExecuteCall",
    "ExecuteError",
    "ExecuteResult",
    "FailureKind",
    "GatewayConnections",
    "GatewayExecution",
    "GatewayFailure",
    "GatewayListing",
    "GatewaySchemas",
    "GatewaySearch",
]

FailureKind = Literal["signed_out", "not_served", "unreachable", "rate_limited", "error"]
"""``signed_out``: the token was refused (HTTP 401/403); ``not_served``: the gateway does not
serve this account (404; connectors stay silent); ``unreachable``: transport errors, timeouts,
5xx; ``rate_limited``: 429 after the retries the route allows; ``error``: any other refusal or
an answer that does not follow the protocol."""

_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class GatewayFailure:
    """Why the gateway could not answer a request; ``retry_after`` (seconds) for a rate
    limit."""

    kind: FailureKind
    message: str
    retry_after: float | None = None


@dataclass(frozen=True)
class ConnectorSchema:
    """One gateway tool: its ``slug``, its ``connector`` (slug), description, JSON Schema of
    its arguments, and ``annotations``: the MCP hints the gateway states for it, in their wire
    form (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``; empty
    when it states none). A hint left out takes MCP's default (destructive, open world, not
    read-only, not idempotent), which the ``annotations`` approval policy asks for."""

    slug: str
    connector: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: dict(_EMPTY_SCHEMA))
    annotations: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GatewaySearch:
    """``v1/connectors/search``: for each use case (by position), the slugs found; the schema of
    each slug; whether each connector involved is connected."""

    results: Sequence[Sequence[str]] = ()
    schemas: Mapping[str, ConnectorSchema] = field(default_factory=dict)
    connections: Mapping[str, bool] = field(default_factory=dict)
    failure: GatewayFailure | None = None


@dataclass(frozen=True)
class GatewaySchemas:
    """``v1/connectors/schemas``: the schemas found, and the slugs the gateway does not know."""

    schemas: Mapping[str, ConnectorSchema] = field(default_factory=dict)
    not_found: Sequence[str] = ()
    failure: GatewayFailure | None = None


@dataclass(frozen=True)
class ExecuteCall:
    """One entry of ``v1/connectors/execute``: the connector, the tool slug, the arguments."""

    connector: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExecuteError:
    """An entry the gateway refused: its ``code`` (``TOOL_NOT_FOUND``,
    ``CONNECTION_REQUIRED``...), message, and for a connection problem the link that fixes
    it."""

    code: str
    message: str
    connect_url: str | None = None
    hint: str | None = None


@dataclass(frozen=True)
class ExecuteResult:
    """The answer for one :class:`ExecuteCall`: its ``data``, or ``error``."""

    connector: str
    tool: str
    data: Any = None
    error: ExecuteError | None = None


@dataclass(frozen=True)
class GatewayExecution:
    """``v1/connectors/execute``: one result per call, by position."""

    results: Sequence[ExecuteResult] = ()
    failure: GatewayFailure | None = None


@dataclass(frozen=True)
class ConnectionLink:
    """``v1/connectors/connections`` for one connector: ``active`` (connected),
    ``initiated`` (the user opens ``connect_url`` to finish) or ``failed``."""

    connector: str
    status: Literal["active", "initiated", "failed"]
    connect_url: str | None = None


@dataclass(frozen=True)
class GatewayConnections:
    """``v1/connectors/connections``: one link per connector asked for, by position."""

    results: Sequence[ConnectionLink] = ()
    failure: GatewayFailure | None = None


@dataclass(frozen=True)
class ConnectorState:
    """One connector of the account: whether it is connected, and the gateway's word for its
    connection (``active``, ``expired``, ``initiated``, ``not_connected``...)."""

    connector: str
    connected: bool
    status: str = ""


@dataclass(frozen=True)
class GatewayListing:
    """``GET v1/connectors``, every page: the account's connectors."""

    items: Sequence[ConnectorState] = ()
    failure: GatewayFailure | None = None


class ConnectorGateway(Protocol):
    """A hosted tool gateway, one coroutine per route; none raises for a gateway failure."""

    async def search(self, use_cases: Sequence[str]) -> GatewaySearch:
        """Search every use case in one request (30 s, no retry)."""
        ...

    async def schemas(self, slugs: Sequence[str]) -> GatewaySchemas:
        """The schemas of ``slugs`` in one request (10 s, one retry)."""
        ...

    async def execute(self, calls: Sequence[ExecuteCall]) -> GatewayExecution:
        """Run ``calls`` in one request (60 s, one retry with the same idempotency key)."""
        ...

    async def connect(self, connectors: Sequence[str], reinitiate: bool) -> GatewayConnections:
        """Ask for authorization of ``connectors`` (never retried); ``reinitiate`` starts a new
        connection even for a connected one. Never disconnects anything."""
        ...

    async def list_connectors(self) -> GatewayListing:
        """The account's connectors and their connection state (10 s, one retry)."""
        ...

    async def aclose(self) -> None:
        """Release connections; the host calls it when it shuts down."""
        ...
