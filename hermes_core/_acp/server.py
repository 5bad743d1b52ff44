"""The ACP agent: ``initialize``, ``session/new``, ``session/load``, ``session/prompt``,
``session/set_config_option`` and ``session/cancel`` over hermes' conversation loop (the
SDK's ``acp.Agent`` protocol; the connection calls these methods with the request's fields as
keywords).

``initialize`` says only what hermes does (:mod:`~hermes_core._acp.handshake`, where
``hermes acp`` answers it before loading the SDK). It needs no host: ``ready`` waits for the
host and the model, which start behind it.

``session/new`` requires an absolute ``cwd`` (a relative one is refused with invalid params):
it becomes the hermes session's working directory, which bounds every file and terminal tool
of the session. The session is granted the ``hermes-acp`` toolsets (:data:`ACP_TOOLSETS`),
the MCP servers of ``config.yaml`` and the client's own servers for this session
(:mod:`~hermes_core._acp.client_servers`); its approvals are asked through
``session/request_permission`` (:mod:`~hermes_core._acp.permissions`); its slash commands are
advertised once the answer is sent (:meth:`~hermes_core._acp.session.AcpSession.advertise`);
its answer carries its config options, the editor's model and thinking-level pickers, which
``session/set_config_option`` switches for that session only
(:mod:`~hermes_core._acp.config_options`; each session has its own agent for it).
``session/load`` takes a session up again from its transcript, read a line at a time
(:func:`~hermes_core.agent._streamed_history.resumption_and_written`) and told to the client
as it is read (:mod:`~hermes_core._acp.replay`); a call the transcript holds no result for
(hermes ended in its middle) is answered as failed first
(:meth:`~hermes_core.agent._transcripts.Transcript.history`).

A turn whose model request failed for good (``Finished.stop == "error"``: a bad key, an unknown
model, the server down after the retries) is answered with a JSON-RPC error carrying the
provider's message, not with a stop reason: ACP's ``refusal`` means the model declined, and an
editor shows an error where it would show nothing for a refusal.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_core._acp.client_servers import ClientServers, connect_client_servers, failures_told
from hermes_core._acp.config_options import ModelListing, SessionChoices
from hermes_core._acp.handshake import initialize_result
from hermes_core._acp.permissions import AcpPermissionPrompt
from hermes_core._acp.replay import compaction_thought, replayed
from hermes_core._acp.session import AcpSession, ModelFailed, TurnState, prompt_text
from hermes_core._client_io import attach_client_io
from hermes_core._mcp.names import mcp_toolset
from hermes_core.agent._sendable_history import each_call_answered
from hermes_core.agent._streamed_history import resumption_and_written
from hermes_core.agent._transcripts import TranscriptError

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import (
        ClientCapabilities,
        InitializeResponse,
        LoadSessionResponse,
        NewSessionResponse,
        PromptResponse,
        SetSessionConfigOptionResponse,
    )

    from hermes_core._acp.runtime import AcpRuntime

_log = logging.getLogger(__name__)
_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""What a session id may be (it names its transcript file)."""

ACP_TOOLSETS: Final = frozenset(
    {"files", "terminal", "code_execution", "tool_search", "delegation"}
)
"""The ``hermes-acp`` toolsets an ACP session is granted: files (reading, writing, patching,
searching them), the terminal, ``execute_code``, ``delegate_task`` and the bridge
(``tool_search``, ``tool_describe``, ``tool_call``). Messaging, cron, ``clarify`` and the
hosted connectors are left out: they do not fit an editor."""

Ready = Callable[[], Awaitable["AcpRuntime"]]
"""Waits for the started host and the agent over its model (and raises what stopped them)."""


class AcpServer:
    """An ACP agent over the host and agent ``ready`` gives. :meth:`aclose` ends its sessions
    (the plugins' ``hermes_session_end`` observers run: background processes are stopped)."""

    def __init__(self, ready: Ready) -> None:
        self._ready = ready
        self._client: Client | None = None
        self._capabilities: ClientCapabilities | None = None
        self._sessions: dict[str, AcpSession] = {}
        self._loading: set[str] = set()  # ids being loaded: a second load of one is refused
        self._lifetimes = contextlib.AsyncExitStack()
        self._advertising: set[asyncio.Future[None]] = set()
        self._listing = ModelListing()

    def on_connect(self, conn: Client) -> None:
        """The connection to the client, given by the SDK."""
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """hermes' capabilities, honestly (:func:`~hermes_core._acp.handshake.initialize_result`,
        also what ``hermes acp`` answers before the SDK is loaded)."""
        from acp.schema import InitializeResponse

        self._capabilities = client_capabilities
        return InitializeResponse.model_validate(initialize_result(protocol_version))

    def initialized(self, params: dict[str, Any]) -> None:
        """``initialize`` was answered before the SDK was loaded: its ``params`` (the client's
        capabilities) are kept as :meth:`initialize` would have."""
        from acp.schema import ClientCapabilities
        from pydantic import ValidationError

        try:
            self._capabilities = ClientCapabilities.model_validate(
                params.get("clientCapabilities") or {}
            )
        except ValidationError as exc:  # offered nothing hermes can read: it uses its own
            _log.warning("the client's capabilities are not readable: %s", exc)

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A session working in the absolute directory ``cwd``, with the client's MCP
        servers."""
        from acp.schema import NewSessionResponse

        directory = _directory(cwd)
        runtime = await self._started()
        clients = await self._grant(runtime, mcp_servers, directory)
        session = await self._open(runtime, directory, clients.toolsets)
        self._sessions[session.id] = session
        # After the answer, which names the session to the client: this task runs once the
        # handler has returned and the answer is written (nothing awaits in between).
        task = asyncio.ensure_future(self._advertise(session, failures_told(clients.failures)))
        self._advertising.add(task)
        task.add_done_callback(self._advertising.discard)
        return NewSessionResponse(session_id=session.id, config_options=session.choices.options())

    async def _advertise(self, session: AcpSession, failures: Any | None) -> None:
        try:
            if failures is not None:
                await session.client.session_update(session_id=session.id, update=failures)
            await session.advertise()
        except Exception as exc:  # a client gone already: nothing to tell it
            _log.debug("available_commands_update of %s: %s", session.id, exc)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """The session ``session_id`` again, from its transcript: its history is told to the
        client (:mod:`~hermes_core._acp.replay`) and the conversation goes on from it."""
        from acp import RequestError
        from acp.schema import LoadSessionResponse

        directory = _directory(cwd)
        runtime = await self._started()
        store = runtime.agent.transcripts
        if (
            store is None
            or not _SESSION_ID.fullmatch(session_id)
            or not (store.directory / f"{session_id}.jsonl").is_file()
        ):
            where = (
                store.elsewhere(session_id) if store and _SESSION_ID.fullmatch(session_id) else ""
            )
            raise RequestError.invalid_params(
                {"sessionId": session_id, "message": f"no transcript of this session{where}"}
            )
        if store.refusal is not None:  # a home in the project, its gate closed
            raise RequestError.invalid_params({"sessionId": session_id, "message": store.refusal})
        if session_id in self._sessions or session_id in self._loading:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "message": "the session is already open"}
            )
        self._loading.add(session_id)
        try:
            try:
                transcript = store.open(session_id)
                if parent := transcript.header().get("parent"):
                    # As hermes chat --resume: a child's conversation went on in its parent's.
                    raise TranscriptError(
                        f"{session_id} is a subagent's conversation; load its parent, {parent}"
                    )
                resumed, written = resumption_and_written(transcript)
            except (OSError, TranscriptError) as exc:
                _log.warning("session/load %s: %s", session_id, exc)
                raise RequestError.invalid_params(
                    {"sessionId": session_id, "message": str(exc)}
                ) from None
            with contextlib.closing(written):
                clients = await self._grant(runtime, mcp_servers, directory)
                session = await self._open(
                    runtime, directory, clients.toolsets, session_id=session_id
                )
                messages = resumed.history
                session.conversation.messages.extend(messages)
                told = [compaction_thought(messages), failures_told(clients.failures)]
                shown = replayed(each_call_answered(written), directory)
                for update in itertools.chain(shown, (one for one in told if one is not None)):
                    await session.client.session_update(session_id=session_id, update=update)
            await session.advertise()
            self._sessions[session_id] = session
        finally:
            self._loading.discard(session_id)
        return LoadSessionResponse(config_options=session.choices.options())

    async def _grant(
        self, runtime: AcpRuntime, mcp_servers: list[Any] | None, cwd: Path
    ) -> ClientServers:
        toolsets = ACP_TOOLSETS | {mcp_toolset(name) for name in runtime.host.config.mcp_servers}
        clients = await connect_client_servers(runtime, mcp_servers or [], cwd)
        return ClientServers(toolsets | clients.toolsets, clients.failures)

    async def _started(self) -> AcpRuntime:
        from acp import RequestError

        try:
            return await self._ready()
        except Exception as exc:  # logged once, when it failed (stdio's _log_failure)
            raise RequestError.internal_error(
                {"details": f"hermes could not start: {exc}"}
            ) from exc

    async def _open(
        self,
        runtime: AcpRuntime,
        cwd: Path,
        toolsets: frozenset[str],
        *,
        session_id: str | None = None,
    ) -> AcpSession:
        client = self._connected()
        # Its own agent: a model the editor picks for this session (use_model replaces the
        # agent's) reaches no other session.
        host, agent = runtime.host, copy.copy(runtime.agent)
        listed = await self._listing.models(agent.provider, agent.model.provider)
        state = TurnState()
        session_id = session_id or uuid.uuid4().hex
        prompt = AcpPermissionPrompt(
            client, session_id, cwd, lambda: state.call_id, lambda: state.cancelled
        )
        session = await self._lifetimes.enter_async_context(
            host.session(
                cwd=cwd, interactive=True, granted_toolsets=toolsets, prompt=prompt, id=session_id
            )
        )
        conversation = agent.conversation(session)
        served = AcpSession(
            client,
            session,
            conversation,
            state,
            context_length=agent.model.context_length,
            choices=SessionChoices(host, conversation, listed),
        )
        self._offer_client_io(served)
        return served

    def _offer_client_io(self, served: AcpSession) -> None:
        """The client's file writes and terminals for the session, when it advertised them."""
        from hermes_core._acp.client_io import AcpClientFiles, AcpClientTerminal

        offered = self._capabilities
        if offered is None:
            return
        # Reads and writes both, or neither: a patch must edit the text the editor writes back.
        fs = offered.fs
        writes = fs is not None and bool(fs.read_text_file) and bool(fs.write_text_file)
        attach_client_io(
            served.session,
            files=AcpClientFiles(served.client, served.id) if writes else None,
            terminal=(
                AcpClientTerminal(served.client, served.id, served.show, served.showed)
                if offered.terminal
                else None
            ),
        )

    def _connected(self) -> Client:
        if self._client is None:
            raise RuntimeError("the ACP server has no client connection")
        return self._client

    def _session(self, session_id: str) -> AcpSession:
        from acp import RequestError

        found = self._sessions.get(session_id)
        if found is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "message": "no such session"}
            )
        return found

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """Run one turn of the session's conversation (one at a time per session)."""
        from acp import RequestError

        session = self._session(session_id)
        if not prompt_text(prompt).strip():
            # An empty user message is refused by some model APIs, and asks nothing of any.
            raise RequestError.invalid_params(
                {"details": "the prompt is empty: no text, resource or link to send to the model"}
            )
        try:
            return await session.prompt(prompt)
        except ModelFailed as failed:
            raise RequestError.internal_error({"details": str(failed)}) from None

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Switch the session's model or thinking effort (for this session only, nothing
        saved; refused while a prompt turn runs); every option, with its value now."""
        from acp.schema import SetSessionConfigOptionResponse

        session = self._session(session_id)
        session.choices.switch(config_id, value, busy=session.busy)
        return SetSessionConfigOptionResponse(config_options=session.choices.options())

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's running turn: the prompt answers ``cancelled``."""
        found = self._sessions.get(session_id)
        if found is not None:
            found.cancel()

    async def aclose(self) -> None:
        """End every session (stopping its running turn and its subagents first)."""
        for task in list(self._advertising):
            task.cancel()
        sessions = list(self._sessions.values())
        self._sessions.clear()
        for session in sessions:
            session.cancel()
        for session in sessions:
            await session.aclose()
        await self._lifetimes.aclose()
        await self._listing.aclose()


def _directory(cwd: str) -> Path:
    """``cwd`` of ``session/new`` or ``session/load``: absolute and an existing directory, or
    invalid params."""
    from acp import RequestError

    directory = Path(cwd)
    if not directory.is_absolute():
        raise RequestError.invalid_params({"cwd": cwd, "message": "cwd must be an absolute path"})
    if not directory.is_dir():
        raise RequestError.invalid_params(
            {"cwd": cwd, "message": "cwd is not an existing directory"}
        )
    return directory
