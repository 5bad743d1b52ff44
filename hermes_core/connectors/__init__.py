"""Hosted connectors: remote tools (Gmail, Linear, Notion...) served by a tool gateway.

They are never registered locally. ``tool_search`` asks the gateway for hits ranked with the
local catalog, ``tool_describe`` fetches their schemas from it, and ``tool_call`` sends each
entry to it, through the dispatcher like any other call. Without a gateway in scope (enabled,
a URL, signed in) nothing of this is visible.

- :mod:`.naming`: ``connectors__<connector>__<tool>`` and gateway slugs, twins;
- :mod:`.gateway`: the :class:`~hermes_core.connectors._gateway.ConnectorGateway` protocol a
  gateway plugin implements (the five routes of the gateway protocol, wire-agnostic);
- :mod:`.service`: :class:`~hermes_core.connectors._service.Connectors`, the bridge's view over
  the selected gateway (scope, search, describe, calls with the literal-slug retry), which
  implements :class:`~hermes_core.search._remote.ConnectorSource` (the bridge's own protocol;
  the batch limit and answer are :mod:`hermes_core.search._batches`);
- :mod:`.signin`: the token in ``$HERMES_HOME/auth.json`` or ``HERMES_CONNECTORS_TOKEN``;
- :mod:`.manage`: the ``manage_connections`` tool.

This package module is the connector gateway author's face: the :class:`ConnectorGateway`
contract, its :class:`GatewayContext` and its answer types. A gateway plugin registers a
``ConnectorGatewaySpec`` (``hermes_core.plugin``) and checks itself with
``hermes_core.testing.connector_gateway_conformance``; the reference gateway (``hermes
connectors dev-gateway``) is ``hermes_core.testing.DevGateway``. hermes-core itself imports
from the submodules, and names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import FACES, face_names, lazy_exports

if TYPE_CHECKING:
    from hermes_core._specs import (
        GatewayContext as GatewayContext,
    )
    from hermes_core.connectors._gateway import (
        ConnectionLink as ConnectionLink,
    )
    from hermes_core.connectors._gateway import (
        ConnectorGateway as ConnectorGateway,
    )
    from hermes_core.connectors._gateway import (
        ConnectorSchema as ConnectorSchema,
    )
    from hermes_core.connectors._gateway import (
        ConnectorState as ConnectorState,
    )
    from hermes_core.connectors._gateway import (
        ExecuteCall as ExecuteCall,
    )
    from hermes_core.connectors._gateway import (
        ExecuteError as ExecuteError,
    )
    from hermes_core.connectors._gateway import (
        ExecuteResult as ExecuteResult,
    )
    from hermes_core.connectors._gateway import (
        GatewayConnections as GatewayConnections,
    )
    from hermes_core.connectors._gateway import (
        GatewayExecution as GatewayExecution,
    )
    from hermes_core.connectors._gateway import (
        GatewayFailure as GatewayFailure,
    )
    from hermes_core.connectors._gateway import (
        GatewayListing as GatewayListing,
    )
    from hermes_core.connectors._gateway import (
        GatewaySchemas as GatewaySchemas,
    )
    from hermes_core.connectors._gateway import (
        GatewaySearch as GatewaySearch,
    )

__all__ = face_names("hermes_core.connectors")

__getattr__, __dir__ = lazy_exports(__name__, FACES[__name__], __all__, globals())
