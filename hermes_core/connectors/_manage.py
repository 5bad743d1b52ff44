"""``manage_connections``: status, connect and reconnect of hosted apps and local MCP servers.

``{action: "status"|"connect"|"reconnect", connectors?: [slug or {name, mcp?: true}],
force?: bool}``. A plain slug names a hosted connector (those actions need connectors in scope;
without them the answer says to sign in). A target with ``mcp: true`` acts on the local MCP
servers instead: ``connect`` installs a catalog entry (probing it first; a failed probe writes
nothing) or enables a configured server, ``reconnect`` restarts a configured server that is
unavailable (any, with ``force``). Nothing here ever disconnects or deletes an account.

``connect`` returns a ``connect_url`` per app for the user to open; :func:`wait_for_connections`
is the polling an interactive command line does instead (``hermes connectors connect``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hermes_core._config import McpServerConfig, edit_config
from hermes_core._errors import HermesError
from hermes_core._paths import Environment
from hermes_core._tools import READ_ONLY_CALLS_META, Tool, ToolAnnotations, ToolResult
from hermes_core.connectors._signin import SignIn, sign_in_again
from hermes_core.search._render import compact_json

if TYPE_CHECKING:
    from hermes_core._mcp.supervisor import ServerStatus
    from hermes_core.connectors._gateway import ConnectionLink, GatewayFailure
    from hermes_core.connectors._service import Connectors, Scope

__all__ = [
    "BROKEN_STATES",
    "MANAGE_CONNECTIONS",
    "ConnectionsFailed",
    "LocalServers",
    "Target",
    "WaitOutcome",
    "manage_connections_tool",
    "wait_for_connections",
]

MANAGE_CONNECTIONS = "manage_connections"
BROKEN_STATES = frozenset({"expired", "failed", "error", "revoked", "inactive"})
"""Connection states ``reconnect`` repairs without ``force``."""

Action = Literal["status", "connect", "reconnect"]

_DESCRIPTION = (
    "Manage connections: action 'status' lists the hosted app connectors and the local MCP "
    "servers with their state; 'connect' returns a connect_url per app, for the user to open "
    "in a browser (show it to them); 'reconnect' repairs broken connections (every one with "
    "force). A target {name, mcp: true} is a local MCP server: 'connect' installs it from the "
    "catalog or enables a configured one. Never disconnects anything."
)
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["status", "connect", "reconnect"]},
        "connectors": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"type": "string"},
                    {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "mcp": {"type": "boolean"}},
                        "required": ["name"],
                    },
                ]
            },
            "description": "Apps, by the <app> of their connectors__<app>__<tool> tools, or "
            "{name, mcp: true} for a local MCP server.",
        },
        "force": {"type": "boolean", "description": "reconnect even healthy connections"},
    },
    "required": ["action"],
}
_LINK_HINT = (
    "Show each connect_url to the user to open in a browser; once they say they are done, "
    "call the app's tools again (or manage_connections with action 'status')."
)


@dataclass(frozen=True)
class Target:
    """One entry of ``connectors``: a hosted connector slug, or a local MCP server."""

    name: str
    mcp: bool = False


class LocalServers:
    """The local MCP servers as ``manage_connections`` changes them: the configuration file
    (edited keeping comments) and the running host (``add`` connects or replaces a server,
    ``statuses`` reports them). ``add`` is ``None`` while the host supervises no MCP server
    (none was configured when it started): a server written then connects at the next start."""

    def __init__(
        self,
        env: Environment,
        configured: Callable[[], Mapping[str, McpServerConfig]],
        statuses: Callable[[], Mapping[str, ServerStatus]],
        add: Callable[[], Callable[[str, McpServerConfig], Awaitable[ServerStatus]] | None],
    ) -> None:
        self.env = env
        self._configured = configured
        self._statuses = statuses
        self._adder = add

    async def _add(self, name: str, config: McpServerConfig, outcome: str) -> dict[str, Any]:
        add = self._adder()
        if add is None:
            return {
                "name": name,
                "mcp": True,
                "status": outcome,
                "state": "configured",
                "message": "written to the configuration: it connects when hermes starts next",
            }
        return _local(name, outcome, await add(name, config))

    def status(self) -> list[dict[str, Any]]:
        """Each configured server with its state."""
        statuses = self._statuses()
        rows = []
        for name, config in self._configured().items():
            status = statuses.get(name)
            state = status.state if status is not None else "configured"
            if not config.enabled:
                state = "disabled"
            row: dict[str, Any] = {"name": name, "mcp": True, "state": state}
            if status is not None and status.reason:
                row["reason"] = status.reason
            if status is not None and status.state == "connected":
                row["tool_count"] = status.tool_count
            rows.append(row)
        return rows

    async def connect(self, name: str) -> dict[str, Any]:
        """Enable the configured server ``name``, or install it from the catalog (probed
        first)."""
        config = self._configured().get(name)
        if config is not None:
            status = self._statuses().get(name)
            if config.enabled and status is not None and status.state == "connected":
                return _local(name, "connected", status)
            if not config.enabled:
                with edit_config(self.env) as document:
                    document.set(f"mcp_servers.{name}.enabled", True)
                    document.validate()
                config = config.model_copy(update={"enabled": True})
            return await self._add(name, config, "enabled")
        # Imported here: the MCP SDK is loaded only when a server is installed.
        from hermes_core._mcp.catalog import load_catalog
        from hermes_core._mcp.install import install_catalog_server

        catalog = load_catalog(self.env)
        server = catalog.get(name)
        if server is None:
            known = ", ".join(sorted({*self._configured(), *catalog}))
            raise HermesError(
                f"no configured MCP server and no catalog entry is named {name!r} (known: {known})"
            )
        entry, _ = await install_catalog_server(self.env, server, name, {})
        return await self._add(name, McpServerConfig.model_validate(entry), "installed")

    async def reconnect(self, name: str, *, force: bool) -> dict[str, Any]:
        """Restart the configured server ``name`` when it is unavailable (or ``force``)."""
        config = self._configured().get(name)
        if config is None:
            raise HermesError(f"no MCP server {name!r} is configured")
        status = self._statuses().get(name)
        if status is not None and status.state == "connected" and not force:
            return _local(name, "skipped", status, "connected: nothing to repair")
        if not config.enabled:
            return {"name": name, "mcp": True, "status": "skipped", "message": "disabled"}
        return await self._add(name, config, "restarted")


def _local(
    name: str, outcome: str, status: ServerStatus, message: str | None = None
) -> dict[str, Any]:
    row: dict[str, Any] = {"name": name, "mcp": True, "status": outcome, "state": status.state}
    if status.state == "connected":
        row["tool_count"] = status.tool_count
    elif status.reason:
        row["reason"] = status.reason
    if message:
        row["message"] = message
    return row


def parse_targets(value: Any) -> list[Target]:
    """The ``connectors`` argument as targets (the dispatcher validated its shape)."""
    targets: list[Target] = []
    for item in value or ():
        if isinstance(item, str):
            targets.append(Target(item.strip()))
        elif isinstance(item, Mapping):
            targets.append(Target(str(item.get("name", "")).strip(), bool(item.get("mcp"))))
    return [target for target in targets if target.name]


def manage_connections_tool(apps: Callable[[], Connectors], local: LocalServers) -> Tool:
    """The ``manage_connections`` tool over the hosted connectors ``apps()`` gives (asked at
    each call, so registering the tool loads nothing of them) and the local MCP servers."""

    async def manage_connections(
        action: Action, connectors: list[Any] | None = None, force: bool = False
    ) -> ToolResult:
        service = apps()
        targets = parse_targets(connectors)
        hosted = [target.name for target in targets if not target.mcp]
        servers = [target.name for target in targets if target.mcp]
        if action == "status":
            return _answer(await _status(service, local, hosted, servers))
        if action not in ("connect", "reconnect"):
            return _refusal(f"unknown action {action!r}: use status, connect or reconnect")
        if action == "connect" and not targets:
            return _refusal("name the apps to connect in 'connectors' (their slugs)")
        scope = service.scope()
        if not scope.in_scope and not servers:
            return _signed_out(scope)
        results: list[dict[str, Any]] = []
        if hosted or (action == "reconnect" and not servers):
            if scope.in_scope:
                results.extend(await _hosted(service, action, hosted, force=force))
            else:
                results.extend(_sign_in_rows(hosted, scope))
        for name in servers:
            try:
                if action == "connect":
                    results.append(await local.connect(name))
                else:
                    results.append(await local.reconnect(name, force=force))
            except HermesError as exc:
                results.append({"name": name, "mcp": True, "status": "failed", "message": str(exc)})
        payload: dict[str, Any] = {"action": action, "results": results}
        if any("connect_url" in row for row in results):
            payload["hint"] = _LINK_HINT
        return _answer(payload)

    return Tool(
        name=MANAGE_CONNECTIONS,
        description=_DESCRIPTION,
        parameters=_SCHEMA,
        handler=manage_connections,
        toolset="connections",
        source="builtin",
        source_name="connections",
        annotations=ToolAnnotations(read_only=False, destructive=False, open_world=True),
        timeout=600.0,
        # connect installs or enables servers and reconnect restarts them; status only reads.
        meta={READ_ONLY_CALLS_META: {"action": ["status"]}},
    )


async def _status(
    connectors: Connectors, local: LocalServers, hosted: Sequence[str], servers: Sequence[str]
) -> dict[str, Any]:
    scope = connectors.scope()
    section: dict[str, Any]
    if not scope.in_scope:
        section = {"status": "unavailable", "reason": scope.reason, "message": scope.message}
    else:
        listing = await connectors.states()
        if listing.failure is not None:
            section = _failure_section(listing.failure)
        else:
            wanted = set(hosted)
            section = {
                "status": "available",
                "items": [
                    {"name": item.connector, "connected": item.connected, "state": item.status}
                    for item in listing.items
                    if not wanted or item.connector in wanted
                ],
            }
    rows = local.status()
    if servers:
        rows = [row for row in rows if row["name"] in set(servers)]
    return {"action": "status", "connectors": section, "mcp_servers": rows}


def _failure_section(failure: GatewayFailure) -> dict[str, Any]:
    """``reason`` is the failure's kind (``unreachable`` only for a gateway that could not be
    reached, ``error`` for an answer off the protocol...), ``message`` says what."""
    return {"status": "unavailable", "reason": failure.kind, "message": failure.message}


async def _hosted(
    connectors: Connectors, action: Action, names: Sequence[str], *, force: bool
) -> list[dict[str, Any]]:
    """Connect ``names``; or reconnect them (connected ones only with ``force``; without
    names, every broken connection, and with ``force`` every connection)."""
    skipped: list[dict[str, Any]] = []
    wanted = list(dict.fromkeys(names))
    if action == "reconnect":
        listing = await connectors.states()
        if listing.failure is not None:
            return [{"status": "failed", **_failure_section(listing.failure)}]
        states = {item.connector: item for item in listing.items}
        if not wanted:
            wanted = [
                item.connector
                for item in listing.items
                if item.status in BROKEN_STATES or (force and item.connected)
            ]
        if not force:
            for name in [name for name in wanted if name in states and states[name].connected]:
                wanted.remove(name)
                skipped.append(
                    {"name": name, "status": "skipped", "message": "connected: nothing to repair"}
                )
    if not wanted:
        return skipped or [{"status": "skipped", "message": "no broken connection to repair"}]
    answer = await connectors.connect(wanted, reinitiate=action == "reconnect")
    if answer.failure is not None:
        row = {"status": "failed", **_failure_section(answer.failure)}
        return [*skipped, *({"name": name, **row} for name in wanted)]
    by_name = {link.connector: link for link in answer.results}
    return [*skipped, *(_link_row(name, by_name.get(name)) for name in wanted)]


def _link_row(name: str, link: ConnectionLink | None) -> dict[str, Any]:
    if link is None:
        return {"name": name, "status": "failed", "message": "the gateway gave no answer for it"}
    if link.status == "active":
        return {"name": name, "status": "connected"}
    if link.status == "initiated" and link.connect_url:
        return {"name": name, "status": "initiated", "connect_url": link.connect_url}
    return {"name": name, "status": "failed", "message": "the gateway could not start it"}


def _sign_in_rows(names: Sequence[str], scope: Scope) -> list[dict[str, Any]]:
    return [{"name": name, "status": "unavailable", "message": scope.message} for name in names]


def _signed_out(scope: Scope) -> ToolResult:
    code = "SIGNED_OUT" if scope.reason == "signed_out" else "NOT_AVAILABLE"
    return _refusal(f"hosted connectors are not available: {scope.message}", code)


def _refusal(message: str, code: str = "INVALID_ARGUMENTS") -> ToolResult:
    payload = {"error": message, "code": code}
    return ToolResult(
        content=[{"type": "text", "text": compact_json(payload)}],
        structured=payload,
        is_error=True,
        error_code=code,
        error_message=message,
    )


def _answer(payload: dict[str, Any]) -> ToolResult:
    return ToolResult.text(compact_json(payload), structured=payload)


# Waiting on the command line -------------------------------------------------------------------

WaitOutcome = Literal["connected", "skipped", "not connected"]


class ConnectionsFailed(HermesError):
    """The gateway could not answer the request for links (``failure`` says why): an error of
    the gateway, not of the configuration or the command line."""

    def __init__(self, failure: GatewayFailure, sign_in: SignIn) -> None:
        what = f"the connector gateway could not start the connections: {failure.message}"
        if failure.kind == "signed_out":
            what += f": {sign_in_again(sign_in)}"
        super().__init__(what)
        self.failure = failure


async def wait_for_connections(
    connectors: Connectors,
    names: Sequence[str],
    *,
    timeout: float,
    interval: float = 3.0,
    on_link: Callable[[str, str], None] | None = None,
) -> dict[str, WaitOutcome]:
    """Connect ``names`` and wait for the user: each link goes to ``on_link(name, url)``, and
    the list is polled every ``interval`` seconds until every app is connected or ``timeout``
    passed. Per app: ``connected`` (already, or by the deadline), ``skipped`` (the gateway
    could not start a connection for it) or ``not connected``. Raises
    :class:`ConnectionsFailed` when the gateway could not answer the request for links."""
    import anyio

    answer = await connectors.connect(list(names), reinitiate=False)
    if answer.failure is not None:
        raise ConnectionsFailed(answer.failure, connectors.sign_in())
    by_name = {link.connector: link for link in answer.results}
    outcome: dict[str, WaitOutcome] = {}
    waiting: list[str] = []
    for name in names:
        link = by_name.get(name)
        if link is not None and link.status == "active":
            outcome[name] = "connected"
        elif link is not None and link.status == "initiated" and link.connect_url:
            waiting.append(name)
            if on_link is not None:
                on_link(name, link.connect_url)
        else:
            outcome[name] = "skipped"
    deadline = time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        await anyio.sleep(min(interval, max(0.0, deadline - time.monotonic())))
        listing = await connectors.states()
        connected = {item.connector for item in listing.items if item.connected}
        for name in [name for name in waiting if name in connected]:
            waiting.remove(name)
            outcome[name] = "connected"
    for name in waiting:
        outcome[name] = "not connected"
    return {name: outcome[name] for name in names}
