"""What the bridge needs from hosted connectors, as a protocol the connectors layer implements.

Connector tools are never registered locally: ``tool_search`` asks the gateway for hits that are
ranked with the local catalog, ``tool_describe`` fetches their schemas, and ``tool_call`` plans
each entry with the tool :meth:`ConnectorSource.tool` gives for its
``connectors__<connector>__<tool>`` name, which the dispatcher runs like any tool (hooks, one
approval per entry, the activity log).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from hermes_core._tools import Tool

__all__ = [
    "ConnectorDescription",
    "ConnectorSearch",
    "ConnectorSource",
    "RemoteTool",
    "Unavailable",
]

Unavailable = Literal["unreachable", "signed_out", "rate_limited", "error"]
"""Why the gateway could not answer a search, shown to the model as ``connectors.reason``:
``unreachable`` only when it could not be reached (a transport error, no answer in time, a 5xx),
``signed_out`` when it refused the token, ``rate_limited`` for a 429, ``error`` when it refused
the request or answered off the protocol (or its plugin failed); the message says what."""


@dataclass(frozen=True)
class RemoteTool:
    """A connector tool as the gateway describes it, under its model-facing name."""

    name: str
    connector: str
    description: str
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


@dataclass(frozen=True)
class ConnectorSearch:
    """The gateway's answer to one search request: hits per query, in query order.

    ``unavailable`` says why when the gateway could not answer (:data:`Unavailable`), and
    ``message`` what went wrong in words (the gateway's URL and status, or the field of its
    answer that is off the protocol); then ``hits`` is empty and local results are returned
    unchanged. For ``signed_out``, ``sign_in_again`` says what the user must do (it depends on
    where the token comes from).
    """

    hits: Sequence[Sequence[RemoteTool]] = ()
    unavailable: Unavailable | None = None
    message: str = ""
    sign_in_again: str = ""


@dataclass(frozen=True)
class ConnectorDescription:
    """The gateway's schemas for some names; ``error`` when it could not answer at all."""

    tools: Mapping[str, RemoteTool] = field(default_factory=dict)
    not_found: Sequence[str] = ()
    error: str | None = None


class ConnectorSource(Protocol):
    """The connectors layer as the bridge sees it."""

    def configured(self) -> bool:
        """Whether connectors are enabled and a gateway URL is set (signed in or not)."""
        ...

    def in_scope(self) -> bool:
        """Whether connectors are enabled, configured and signed in."""
        ...

    async def search(self, queries: Sequence[str]) -> ConnectorSearch:
        """All ``queries`` in one gateway request; never raises (failures set ``unavailable``)."""
        ...

    async def describe(self, names: Sequence[str]) -> ConnectorDescription:
        """The schemas of ``names`` in one gateway request; never raises."""
        ...

    def tool(self, name: str) -> Tool:
        """The tool that runs the connector tool ``name`` through the gateway (its handler
        executes it and answers every failure as an error result)."""
        ...
