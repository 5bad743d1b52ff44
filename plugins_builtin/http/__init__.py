"""The bundled connector gateway, ``http``, selected by ``tools.connectors.gateway`` (default).

A client of the gateway protocol of ``spec/connectors.md``: HTTP JSON with a bearer token,
camelCase on the wire, five routes with their own timeouts and retries (:mod:`.client`), answers
checked against the protocol (:mod:`.wire`). It uses only the public ``hermes_core`` API, as a
third-party gateway plugin would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.connectors import GatewayContext
from hermes_core.plugin import ConnectorGatewaySpec, hookimpl

if TYPE_CHECKING:
    from .client import HttpGateway


def create_gateway(context: GatewayContext) -> HttpGateway:
    """A client of the gateway at ``context.url`` for the signed-in user's token."""
    # Imported here so that loading the plugin (every `hermes` command) does not import httpx.
    from .client import HttpGateway

    search_timeout = context.config.tools.connectors.search_timeout
    return HttpGateway(context.url, context.token, search_timeout=search_timeout)


@hookimpl(trylast=True)
def hermes_connector_gateways() -> Sequence[ConnectorGatewaySpec]:
    """Register the ``http`` gateway."""
    return [
        ConnectorGatewaySpec(
            name="http",
            factory=create_gateway,
            description="The hosted tool gateway protocol over HTTP JSON (httpx).",
        )
    ]
