"""The host as one MCP server: ``tools/list`` is the assembled tool array, ``tools/call`` goes
through :meth:`~hermes_core._host.Host.dispatch`.

The SDK's low-level ``Server`` is used because the tool list is not a set of Python functions:
it is whatever :meth:`~hermes_core._host.Host.assemble` returns now (core tools, and the three
bridge tools with the listing when tools are deferred), with raw JSON schemas.

Both protocol eras are served. A 2025-era client (the TypeScript SDK, the MCP Inspector, most
desktop clients) opens with ``initialize`` and is told of list changes by a plain
``notifications/tools/list_changed`` on its connection; a 2026-07-28 client (the Python SDK)
opens a ``subscriptions/listen`` stream and receives the change there.

A call that needs approval asks the person behind the client with an elicitation form when the
client takes one (:mod:`hermes_core._serve.elicitation`); otherwise
``approvals.non_interactive`` answers. The same route carries the forms an upstream MCP server
asks during the call (:mod:`hermes_core._mcp.elicitation`). When the request carries a
``progressToken``, the call's progress reports (:mod:`hermes_core._progress`) go to the client
as ``notifications/progress`` on the request's channel.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal

import anyio
import mcp_types
from mcp.server import CacheHint, NotificationOptions, Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hermes_core._approvals.prompt import Elicit, ElicitationPrompt
from hermes_core._approvals.questions import attach_questions
from hermes_core._encodable import encodable
from hermes_core._host import Host
from hermes_core._mcp.elicitation import ClientForms, FormAnswerer, NobodyAnswers, answering_forms
from hermes_core._progress import ProgressReport, listening_to_progress, progress_sender
from hermes_core._serve.convert import mcp_call_result, mcp_tools
from hermes_core._serve.elicitation import (
    ClientPrompt,
    ClientQuestions,
    asking_route,
    asking_through,
    request_elicit,
)
from hermes_core._serve.parked import ParkedCalls, RoundResult, TooManyParked
from hermes_core._session import Session
from hermes_core._tools import Tool, ToolResult
from hermes_core._version import __version__

__all__ = ["SERVER_NAME", "HostServer", "SessionScope"]

log = logging.getLogger("hermes_core._serve")

SERVER_NAME: Final = "hermes"

INSTRUCTIONS: Final = (
    "hermes-core serves its core tools directly. When more tools exist than fit, the others are "
    "listed in the description of tool_search: find them with tool_search, read a schema with "
    "tool_describe, and run them with tool_call. Calls that need a person's approval ask the "
    "user through an elicitation form when this client supports one; otherwise they follow "
    "approvals.non_interactive in the hermes configuration (deny by default)."
)
HELD_SERVERS_START_AFTER: Final = 2.0
"""Seconds after serving begins at which MCP servers held back at start are started even if no
client has asked for the tool list (see :meth:`HostServer.start_held_servers`)."""
ANSWER_GRACE: Final = 60.0
"""Seconds beyond ``approvals.timeout`` that a parked call's token stays valid, so an answer that
comes too late is told it was denied instead of being refused as an unknown state."""

SessionScope = Literal["connection", "request"]
"""``connection``: one hermes session for the whole connection (stdio, one client per process).
``request``: a fresh session per request (stateless streamable HTTP, where consecutive requests
may reach different instances)."""

ToolSignature = tuple[tuple[str, str, str, str], ...]


def _progress_notifier(
    ctx: ServerRequestContext[Any, Any], token: str | int
) -> Callable[[ProgressReport], Awaitable[None]]:
    """Sends a report as ``notifications/progress`` with the client's ``token``, on the
    request's own channel (over HTTP: the stream of the call's response)."""

    async def send(report: ProgressReport) -> None:
        await ctx.session.send_progress_notification(
            token,
            report.progress,
            report.total,
            None if report.message is None else encodable(report.message),
            related_request_id=str(ctx.request_id),
        )

    return send


class HostServer:
    """The MCP server face of one started :class:`~hermes_core._host.Host`.

    ``context_length`` is the client model's context length in tokens when known; it sets the
    listing budget of the assembly (``None``: the documented default budget). ``server`` is the
    SDK ``Server`` to run over a transport; :meth:`watch_tool_list` runs beside it and tells the
    connected clients when the tool list changes (the registry tells it: nothing polls), and
    ``parked.run`` hosts the calls waiting for a 2026-07-28 client's approval (without it, such
    clients are not asked).
    """

    def __init__(
        self,
        host: Host,
        *,
        context_length: int | None = None,
        session_scope: SessionScope = "connection",
    ) -> None:
        self.host = host
        self.context_length = context_length
        self.session_scope: SessionScope = session_scope
        self._session: Session | None = None
        self._session_started: anyio.Event | None = None
        self._legacy_peer: ServerSession | None = None
        self._converted: tuple[tuple[Tool, ...], list[mcp_types.Tool]] | None = None
        self._listed = anyio.Event()
        self._in_flight: set[anyio.CancelScope] = set()
        self._stopping = False
        self._bus = InMemorySubscriptionBus()
        self._listeners = ListenHandler(self._bus)
        approvals = host.config.approvals
        self._prompt = ClientPrompt(approvals.non_interactive)
        self._questions = ClientQuestions(max_wait=approvals.timeout)
        self.parked = ParkedCalls(keep_for=approvals.timeout + ANSWER_GRACE)
        """Calls of 2026-07-28 clients waiting for an approval; run :meth:`ParkedCalls.run`
        beside the server."""
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            instructions=INSTRUCTIONS,
            cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="private")},
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self._listeners,
        )
        self.server.middleware.append(self._observe)
        # The key lives in this process only: an answer must come back to the same hermes serve.
        security = RequestStateSecurity.ephemeral(ttl=approvals.timeout + ANSWER_GRACE)
        self.server.middleware.append(RequestStateBoundary(security, default_audience=SERVER_NAME))

    # What clients see -------------------------------------------------------------------------

    def tools(self, session: Session | None = None) -> list[mcp_types.Tool]:
        """The ``tools/list`` answer now: the assembled tool array as MCP tools."""
        assembly = self.host.assemble(self.context_length, session)
        # The assembly is the same until a tool changes: converted once for it, not at each
        # request (a schema's encodable check is most of it).
        if self._converted is None or self._converted[0] is not assembly.tools:
            self._converted = (assembly.tools, mcp_tools(assembly.tools))
        return list(self._converted[1])

    def initialization_options(self) -> InitializationOptions:
        """What a 2025-era client learns at ``initialize``: tools, and that their list may
        change (``listChanged``), since this server tells it when it does."""
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    def session_for_request(self) -> Session:
        """The hermes session a request runs in (see :data:`SessionScope`). Its prompt asks the
        client of the request being served when it takes elicitation forms, else gives the
        ``approvals.non_interactive`` answer."""
        if self.session_scope == "request":
            return self._new_session()
        if self._session is None:
            self._session = self._new_session()
        return self._session

    def _new_session(self) -> Session:
        session = self.host.new_session(interactive=False, prompt=self._prompt)
        attach_questions(session, self._questions)
        return session

    async def _call_session(self) -> Session:
        """The session a call runs in, its ``hermes_session_start`` observers run first when it
        is new: each request's own (``request`` scope), or the connection's before its first
        call, which later calls wait for. (A ``tools/list`` request's session runs nothing: it
        is neither started nor ended.)"""
        session = self.session_for_request()
        if self.session_scope == "request":
            await self._notify_session("hermes_session_start", session)
        elif self._session_started is None:
            self._session_started = anyio.Event()
            await self._notify_session("hermes_session_start", session)
            self._session_started.set()
        else:
            await self._session_started.wait()
        return session

    async def _request_done(self, session: Session) -> None:
        """End the session of a call when it was the request's own (``request`` scope): its
        ``hermes_session_end`` observers run, so what the call started in it (a browser,
        background processes) does not outlive the request. Also when the request was
        cancelled."""
        if self.session_scope == "request":
            await self._notify_session("hermes_session_end", session)

    async def end_connection_session(self) -> None:
        """End the connection's session (``connection`` scope) if a call started it: its
        ``hermes_session_end`` observers run. Called once the client has gone."""
        if self._session is not None and self._session_started is not None:
            self._session_started = None
            await self._notify_session("hermes_session_end", self._session)

    async def _notify_session(self, hook_name: str, session: Session) -> None:
        with anyio.CancelScope(shield=True):
            await self.host.dispatcher.notify(hook_name, session=session)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        listed = mcp_types.ListToolsResult(tools=self.tools(self.session_for_request()))
        self._listed.set()
        return listed

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> RoundResult:
        if params.request_state is not None:
            return await self._resume_call(params)
        self._listed.set()
        session = await self._call_session()
        if params.name != "tool_search":
            # MCP has no model turns: any call other than a search ends a run of searches, so
            # the per-turn search limit stops a search loop without blocking a long session.
            session.next_turn()
        arguments: dict[str, Any] = dict(params.arguments or {})
        # A "session" answer would last one request over stateless HTTP: not offered there.
        offer_session = self.session_scope == "connection"
        route = asking_route(ctx)
        if route == "input_required" and self.parked.running:

            async def run_parked(elicit: Elicit) -> mcp_types.CallToolResult:
                prompt = ElicitationPrompt(elicit, offer_session=offer_session)
                try:
                    with asking_through(prompt), answering_forms(ClientForms(elicit)):
                        answered = await self._stoppable(
                            params.name, lambda: self.host.dispatch(params.name, arguments, session)
                        )
                finally:  # the call's own end, not its first round's answer
                    await self._request_done(session)
                return mcp_call_result(answered)

            try:
                return await self.parked.start(run_parked, owner=session)
            except TooManyParked as full:
                await self._request_done(session)
                timeout = self.host.config.approvals.timeout
                return mcp_call_result(
                    ToolResult.error(
                        "NOT_AVAILABLE",
                        f"{params.name} was not run: {full}. Answer the pending approvals or "
                        f"let them time out (approvals.timeout: {timeout:g} s), then call again.",
                    )
                )
        prompt = None
        forms: FormAnswerer = NobodyAnswers()
        if route == "request":
            elicit = request_elicit(ctx)
            prompt = ElicitationPrompt(elicit, offer_session=offer_session)
            forms = ClientForms(elicit)

        async def run() -> ToolResult:
            with asking_through(prompt), answering_forms(forms):
                token = progress_token_from_params(ctx.params)
                if token is None:
                    return await self.host.dispatch(params.name, arguments, session)
                async with progress_sender(_progress_notifier(ctx, token)) as listener:
                    with listening_to_progress(listener):
                        return await self.host.dispatch(params.name, arguments, session)

        try:
            result = await self._stoppable(params.name, run)
        finally:
            await self._request_done(session)
        return mcp_call_result(result)

    async def _stoppable(self, name: str, run: Callable[[], Awaitable[ToolResult]]) -> ToolResult:
        """``run()``'s result, or an ``INTERRUPTED`` error once :meth:`stop_calls` stopped it."""
        with anyio.CancelScope() as scope:
            self._in_flight.add(scope)
            if self._stopping:
                scope.cancel()
            try:
                return await run()
            finally:
                self._in_flight.discard(scope)
        return ToolResult.error(
            "INTERRUPTED",
            f"{name} was stopped: hermes serve is shutting down (SIGTERM or SIGINT). Call it "
            "again once the server is back.",
        )

    def stop_calls(self) -> None:
        """Stop every call running now, and any that starts from now on: each is answered
        ``INTERRUPTED`` (a ``terminal`` command's processes ended, an upstream server's call
        cancelled). Over HTTP the server is stopping: its open requests end at once instead of
        holding the shutdown until they finish."""
        self._stopping = True
        for scope in list(self._in_flight):
            scope.cancel()

    async def _resume_call(self, params: mcp_types.CallToolRequestParams) -> RoundResult:
        """A 2026-07-28 client's retry of a call that asked: hand over its answers."""
        assert params.request_state is not None
        resumed = await self.parked.resume(params.request_state, params.input_responses)
        if resumed is not None:
            return resumed
        return mcp_call_result(
            ToolResult.error(
                "DENIED",
                f"{params.name} was not run: the approval this answers is no longer pending "
                "(its result was already returned). Call the tool again.",
            )
        )

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        for tool in self.host.assemble(self.context_length, None).tools:
            if tool.name == name:
                return dict(tool.parameters)
        return None

    async def start_held_servers(self, after: float = HELD_SERVERS_START_AFTER) -> None:
        """Start the MCP servers the host held back (``McpStartup.hold_background``) once a
        client has the tool list or makes a call, or ``after`` seconds at the latest: answering
        ``initialize`` and ``tools/list`` from the tool manifests does not have to share two
        cores with five server children starting. A call or search that needs a held server
        starts it at once."""
        with anyio.move_on_after(after):
            await self._listed.wait()
        if self.host.mcp is not None:
            self.host.mcp.release_background()

    # Telling clients about changes ------------------------------------------------------------

    async def _observe(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Middleware: remember the connection of a 2025-era client once it is past
        ``initialize``, to send it ``notifications/tools/list_changed`` later."""
        if (
            self.session_scope == "connection"
            and ctx.method != "initialize"
            and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        ):
            self._legacy_peer = ctx.session
        return await call_next(ctx)

    def tool_signature(self) -> ToolSignature:
        """What a client sees of the tool list, to tell a real change from a registry change
        that leaves the list as it was."""
        return tuple(
            (
                tool.name,
                tool.description or "",
                json.dumps(tool.input_schema, sort_keys=True, default=str),
                tool.annotations.model_dump_json() if tool.annotations is not None else "",
            )
            for tool in self.tools()
        )

    async def announce_tool_list_changed(self) -> None:
        """Tell every connected client that the tool list changed: 2026-era clients on their
        ``subscriptions/listen`` streams, the 2025-era client on its connection."""
        await self._bus.publish(ToolsListChanged())
        peer = self._legacy_peer
        if peer is None:
            return
        try:
            await peer.send_tool_list_changed()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            log.debug("the client connection is gone; no more list changes are sent to it")
            self._legacy_peer = None

    def end_listen_streams(self) -> None:
        """End every open ``subscriptions/listen`` stream gracefully (the server is stopping;
        the clients re-listen elsewhere)."""
        self._listeners.close()

    async def watch_tool_list(self) -> None:
        """Run until cancelled: whenever the registry changes (it tells its listeners), and the
        tool list clients see is not what it was, announce it. Changes that come together (a
        server's tools replaced, several servers connecting) are announced once."""
        changed = anyio.Event()

        def on_change() -> None:
            changed.set()

        signature = self.tool_signature()
        unsubscribe = self.host.registry.subscribe(on_change)
        try:
            while True:
                await changed.wait()
                changed = anyio.Event()
                await anyio.sleep(0)  # let the changes made in the same turn of the loop land
                try:
                    current = self.tool_signature()
                except Exception:
                    # A failing search backend must not end serving; tools/list reports the error.
                    log.exception("assembling the changed tool list failed")
                    continue
                if current == signature:
                    continue
                signature = current
                log.info("the tool list changed (%d tools); telling the clients", len(current))
                await self.announce_tool_list_changed()
        finally:
            unsubscribe()
