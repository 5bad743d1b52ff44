"""Hosted connectors: remote tools (Gmail, Linear, Notion...) served by a tool gateway.

They are never registered locally. ``tool_search`` asks the gateway for hits ranked with the
local catalog, ``tool_describe`` fetches their schemas from it, and ``tool_call`` sends each
entry to it, through the dispatcher like any other call. Without a gateway in scope (enabled,
a URL, signed in) nothing of this is visible.

- :mod:`.naming`: ``connectors__<connector>__<tool>`` and gateway slugs, twins;
- :mod:`.gateway`: the :class:`~hermes_core.connectors.gateway.ConnectorGateway` protocol a
  gateway plugin implements (the five routes of the gateway protocol, wire-agnostic);
- :mod:`.service`: :class:`~hermes_core.connectors.service.Connectors`, the bridge's view over
  the selected gateway (scope, search, describe, calls with the literal-slug retry), which
  implements :class:`~hermes_core.search.remote.ConnectorSource` (the bridge's own protocol;
  the batch limit and answer are :mod:`hermes_core.search.batches`);
- :mod:`.signin`: the token in ``$HERMES_HOME/auth.json`` or ``HERMES_CONNECTORS_TOKEN``;
- :mod:`.manage`: the ``manage_connections`` tool;
- :mod:`.fixtures` and :mod:`.devgateway`: the reference gateway (``hermes connectors
  dev-gateway``), a real HTTP server serving the protocol from a fixture file.

Import from the submodules: this package module stays empty so that importing one part does
not load the others.
"""
