"""An ACP client for the tests, and hermes' ACP server on the other end of a real loopback
socket pair (newline-delimited JSON-RPC both ways, as over a pipe), in this process.

:class:`RecordingClient` records every ``session/update`` (the commands advertised apart) and
answers permission requests as the test says (an option, ``cancelled``, or never: a person who
does not answer). When built
with ``fs=True`` / ``terminal=True`` it advertises the client's file system and terminal, and
carries them out on the real disk and with real processes, recording each request.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core import Config, Environment, Host
from hermes_core._acp.runtime import AcpRuntime, own_host
from hermes_core._acp.server import AcpServer
from hermes_core.agent import Agent, ModelSettings, TranscriptStore
from hermes_core.testing import FakeModelProvider
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
    from acp import schema
    from acp.agent import connection as agent_connection
    from acp.client import connection as client_connection
else:  # imported at first use: every pytest worker collects the files that import this one
    acp, schema = Imported("acp"), Imported("acp.schema")
    agent_connection = Imported("acp.agent.connection")
    client_connection = Imported("acp.client.connection")

NEVER = "never"
"""A permission answer: the person never answers (the request stays open)."""


@dataclass
class Terminal:
    """A command the client runs for the agent, and its whole output once it has ended."""

    process: asyncio.subprocess.Process
    output: asyncio.Future[bytes]


async def _read(process: asyncio.subprocess.Process) -> bytes:
    assert process.stdout is not None
    return await process.stdout.read()


@dataclass
class RecordingClient:
    """A client that records what the agent sends and answers permission requests with
    ``permission`` (an option id, ``"cancelled"`` or :data:`NEVER`)."""

    permission: str = "once"
    fs: bool = False
    terminal: bool = False
    updates: list[Any] = field(default_factory=list)
    commands: list[Any] = field(default_factory=list)
    """The ``available_commands_update`` s, kept apart from :attr:`updates` (they come when
    the session opens, whenever the agent sends them, not as part of a turn)."""
    permissions: list[Any] = field(default_factory=list)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    updated: asyncio.Event = field(default_factory=asyncio.Event)
    advertised: asyncio.Event = field(default_factory=asyncio.Event)
    terminals: dict[str, Terminal] = field(default_factory=dict)
    buffers: dict[str, str] = field(default_factory=dict)
    """Unsaved editor buffers by absolute path: what ``fs/read_text_file`` answers for them."""

    def capabilities(self) -> schema.ClientCapabilities:
        return schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
            terminal=self.terminal,
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "available_commands_update":
            self.commands.append(update)  # the session's, not the conversation's
            self.advertised.set()
            return
        self.updates.append(update)
        self.updated.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        self.asked.set()
        if self.permission == NEVER:
            await asyncio.Event().wait()
        if self.permission == "cancelled":
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=self.permission)
        )

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> schema.WriteTextFileResponse:
        self.requests.append(("fs/write_text_file", {"path": path, "content": content}))
        self.buffers.pop(path, None)
        Path(path).write_text(content, encoding="utf-8")
        return schema.WriteTextFileResponse()

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> schema.ReadTextFileResponse:
        self.requests.append(("fs/read_text_file", {"path": path}))
        if path in self.buffers:
            return schema.ReadTextFileResponse(content=self.buffers[path])
        return schema.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, **kwargs: Any
    ) -> schema.CreateTerminalResponse:
        self.requests.append(("terminal/create", {"command": command, "args": args, **kwargs}))
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=kwargs.get("cwd"),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = Terminal(process, asyncio.ensure_future(_read(process)))
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.TerminalOutputResponse:
        self.requests.append(("terminal/output", {"terminal_id": terminal_id}))
        terminal = self.terminals[terminal_id]
        code = terminal.process.returncode
        output = (await terminal.output).decode() if code is not None else ""
        status = None
        if code is not None:
            status = schema.TerminalExitStatus(
                exit_code=code if code >= 0 else None,
                signal=None if code >= 0 else f"signal {-code}",
            )
        return schema.TerminalOutputResponse(output=output, truncated=False, exit_status=status)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.WaitForTerminalExitResponse:
        self.requests.append(("terminal/wait_for_exit", {"terminal_id": terminal_id}))
        code = await self.terminals[terminal_id].process.wait()
        return schema.WaitForTerminalExitResponse(exit_code=code if code >= 0 else None)

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.ReleaseTerminalResponse:
        self.requests.append(("terminal/release", {"terminal_id": terminal_id}))
        await self._kill(terminal_id)
        return schema.ReleaseTerminalResponse()

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.requests.append(("terminal/kill", {"terminal_id": terminal_id}))
        await self._kill(terminal_id)

    async def _kill(self, terminal_id: str) -> None:
        process = self.terminals[terminal_id].process
        if process.returncode is None:
            process.kill()
        await process.wait()

    def on_connect(self, conn: Any) -> None:
        return None

    def kinds(self) -> list[str]:
        """The ``sessionUpdate`` of every update, in order."""
        return [update.session_update for update in self.updates]

    def tool_statuses(self) -> list[tuple[str, str | None]]:
        """``(update kind, status)`` of every tool call update, in order."""
        return [
            (update.session_update, update.status)
            for update in self.updates
            if update.session_update in ("tool_call", "tool_call_update")
        ]

    def text(self) -> str:
        """The agent's message chunks joined."""
        return "".join(
            update.content.text
            for update in self.updates
            if update.session_update == "agent_message_chunk"
        )


@dataclass
class Served:
    """hermes' ACP server over a loopback pair: the client's connection and its recorder."""

    conn: client_connection.ClientSideConnection
    client: RecordingClient
    model: FakeModelProvider
    runtime: AcpRuntime | None
    """The started host and agent (``None`` when they could not start)."""

    async def start(self, cwd: Path, **options: Any) -> str:
        """``initialize`` then ``session/new`` in ``cwd``; the session id."""
        await self.conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=self.client.capabilities()
        )
        created = await self.conn.new_session(cwd=str(cwd), **options)
        return created.session_id

    async def say(self, session_id: str, text: str) -> Any:
        from acp import text_block

        return await self.conn.prompt(session_id=session_id, prompt=[text_block(text)])


async def socket_streams() -> tuple[
    tuple[asyncio.StreamReader, asyncio.StreamWriter],
    tuple[asyncio.StreamReader, asyncio.StreamWriter],
]:
    """Two connected stream pairs over a real socket pair."""
    left, right = socket.socketpair()
    return await asyncio.open_connection(sock=left), await asyncio.open_connection(sock=right)


@asynccontextmanager
async def serving(
    env: Environment,
    model: FakeModelProvider,
    *,
    config: Mapping[str, Any] | None = None,
    plugins: Mapping[str, object] | None = None,
    client: RecordingClient | None = None,
    make_agent: Callable[[Host], Agent] | None = None,
) -> AsyncIterator[Served]:
    """hermes' ACP server (a real host with the bundled plugins, ``model`` as its model) and
    a :class:`RecordingClient` connected to it over a loopback socket pair."""
    host = Host(Config.model_validate(dict(config or {})), env)
    for name, plugin in (plugins or {}).items():
        host.register(plugin, name=name)
    recorder = client or RecordingClient()

    def agent_of(started: Host) -> Agent:
        return Agent(
            started,
            model,
            ModelSettings(provider="fake", model="fake-1", context_length=32_000),
            transcripts=TranscriptStore(env.home / "sessions"),
        )

    ready: asyncio.Future[AcpRuntime] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def started() -> AcpRuntime:
        return await asyncio.shield(ready)

    server = AcpServer(started)
    owner = asyncio.create_task(own_host(host, make_agent or agent_of, ready, done, server.aclose))
    (agent_in, agent_out), (client_in, client_out) = await socket_streams()
    agent_conn = agent_connection.AgentSideConnection(server, agent_out, agent_in)  # type: ignore[arg-type]
    conn = client_connection.ClientSideConnection(recorder, client_out, client_in)  # type: ignore[arg-type]
    try:
        try:
            runtime: AcpRuntime | None = await started()
        except Exception:  # the test looks at what session/new says of it
            runtime = None
        yield Served(conn, recorder, model, runtime)
    finally:
        done.set()
        await owner
        await conn.close()
        await agent_conn.close()
        for writer in (agent_out, client_out):
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
