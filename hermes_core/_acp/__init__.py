"""``hermes acp``: hermes as an Agent Client Protocol agent, for editors (Zed, JetBrains, any
ACP client), over the conversation loop of :mod:`hermes_core.agent`.

An install extra (``acp``: the ``agent-client-protocol`` SDK, pinned to its minor version, the
schema moving between them); nothing here is imported until ``hermes acp`` runs. The pieces:
:mod:`~hermes_core._acp.stdio` (the process's streams, the host's lifetime),
:mod:`~hermes_core._acp.handshake` (``initialize`` answered before the SDK loads),
:mod:`~hermes_core._acp.runtime` (the host and agent, owned by one task),
:mod:`~hermes_core._acp.server` (the protocol's methods), :mod:`~hermes_core._acp.session`
(a turn as ``session/update`` notifications), :mod:`~hermes_core._acp.toolcalls` (kinds,
titles, locations, diffs), :mod:`~hermes_core._acp.permissions` (approvals as
``session/request_permission``), :mod:`~hermes_core._acp.client_servers` (the client's MCP
servers), :mod:`~hermes_core._acp.client_io` (the editor's files and terminals) and
:mod:`~hermes_core._acp.replay` (``session/load``). See docs/acp.md.
"""
